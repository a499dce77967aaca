/** One line of `scoot doctor`: shared by doctor.ts and the doctor-*.ts check modules, so neither imports the other. */
export type Status = "OK" | "WARN" | "FAIL";

export interface Check {
  name: string;
  status: Status;
  detail: string;
}
