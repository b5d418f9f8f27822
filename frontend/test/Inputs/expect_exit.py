"""Runs a command and checks how it failed, for the malformed-input tests.

    expect_exit.py [--any-lines] CODE CMD [ARG...]

Forwards the command's stdout and stderr, then fails (exit 1, with a reason on
stderr) unless the command exited with exactly CODE. A signal or an exit code
of 128 or more is reported as a crash: `not` alone would accept an abort or a
segfault as a failure. Unless --any-lines is given, stderr must also be
exactly one line, since every error is one line naming the node or the file.
"""
import subprocess
import sys


def main(argv):
    one_line = True
    if argv and argv[0] == "--any-lines":
        one_line = False
        argv = argv[1:]
    if len(argv) < 2:
        sys.stderr.write("usage: expect_exit.py [--any-lines] CODE CMD...\n")
        return 2
    expected = int(argv[0])
    proc = subprocess.run(argv[1:], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    sys.stdout.buffer.write(proc.stdout)
    sys.stdout.flush()
    sys.stderr.buffer.write(proc.stderr)
    sys.stderr.flush()
    code = proc.returncode
    if code < 0 or code >= 128:
        sys.stderr.write("expect_exit: CRASH: %s ended with %s\n" %
                         (argv[1], "signal %d" % -code if code < 0 else
                          "exit code %d" % code))
        return 1
    if code != expected:
        sys.stderr.write("expect_exit: %s exited with %d, expected %d\n" %
                         (argv[1], code, expected))
        return 1
    lines = proc.stderr.decode("utf-8", "replace").splitlines()
    if one_line and len(lines) != 1:
        sys.stderr.write("expect_exit: expected one line on stderr, got %d\n" %
                         len(lines))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
