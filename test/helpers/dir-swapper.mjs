// Swaps <project>/sub for a symlink to <outside> and back, as fast as it can, until killed.
// Prints "ready" once the first swap is done and "swaps N" on SIGTERM.
import fs from "node:fs";

const [, , sub, outside] = process.argv;
const aside = `${sub}.real`;
let swaps = 0;
let stop = false;
process.on("SIGTERM", () => {
  stop = true;
});
const loop = () => {
  for (let i = 0; i < 200 && !stop; i++) {
    try {
      fs.renameSync(sub, aside);
      fs.symlinkSync(outside, sub);
      fs.unlinkSync(sub);
      fs.renameSync(aside, sub);
      swaps++;
    } catch {
      // a reader or writer got in the way: try again
    }
  }
  if (swaps > 0 && swaps <= 200) process.stdout.write("ready\n");
  if (stop) {
    try {
      if (fs.lstatSync(sub).isSymbolicLink()) fs.unlinkSync(sub);
    } catch {}
    try {
      fs.renameSync(aside, sub);
    } catch {}
    process.stdout.write(`swaps ${swaps}\n`);
    process.exit(0);
  }
  setImmediate(loop);
};
loop();
