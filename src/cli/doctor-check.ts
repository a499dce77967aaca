/** One line of `scoot doctor`: shared by doctor.ts and doctor-extra.ts, so neither imports the other. */
export type Status = "OK" | "WARN" | "FAIL";

export interface Check {
  name: string;
  status: Status;
  detail: string;
}
