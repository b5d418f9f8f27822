"""help.test's check: HELP (a tool's --help) has at most LIMIT lines, every
one of the texts given after LIMIT, and none of LLVM's own options."""
import sys

path, limit, wanted = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
text = open(path).read()
lines = text.count("\n")
problems = [f"{lines} lines, over {limit}"] if lines > limit else []
problems += [f"no '{w}'" for w in wanted if w not in text]
problems += [f"LLVM's '{o}' shown" for o in ("--print-before-all", "--stats")
             if o in text]
print("; ".join(problems) or "fits, with its groups, without LLVM's options")
