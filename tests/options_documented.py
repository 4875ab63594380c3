#!/usr/bin/env python3
"""The top README's option table and exit-status line against the programs' --help: every
option a program's --help names is in the table, every option in the table is one a program
names, and both say every exit status (0, 1, 2, 77 for no GPU or an exercise not written yet).

usage: options_documented.py README PROGRAM...            check (exit 0 or 1)
       options_documented.py --selftest README PROGRAM... the check must fail on copies of the
                                                          README with an option or a status cut
"""
import re
import subprocess
import sys

OPTION = re.compile(r"(?<![\w-])--[a-z][a-z-]*")
STATUSES = ["0 pass", "1 verification failure", "2 bad usage", "77 no usable GPU",
            "exercise not written yet"]


def readme_parts(text):
    """The option table's rows and the exit-status paragraph."""
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("| option | meaning |"))
    table = []
    for l in lines[start + 2:]:
        if not l.startswith("|"):
            break
        table.append(l)
    para = text[text.index("Exit status:"):]
    para = para[:para.find("\n\n")] if "\n\n" in para else para
    return "\n".join(table), " ".join(para.split())


def problems(readme_text, helps):
    table, status = readme_parts(readme_text)
    in_table = set(OPTION.findall(table))
    in_help = {}
    for program, text in helps.items():
        for o in OPTION.findall(text):
            in_help.setdefault(o, program)
    out = [f"{o} ({p} --help) is missing from the README's option table"
           for o, p in sorted(in_help.items()) if o not in in_table]
    out += [f"{o} is in the README's option table, but no program's --help names it"
            for o in sorted(in_table - set(in_help))]
    out += [f"the README's exit-status line does not say '{s}'" for s in STATUSES
            if s not in status]
    for program, text in helps.items():
        flat = " ".join(text.split())
        out += [f"{program} --help does not say '{s}'" for s in STATUSES if s not in flat]
    return out


def main():
    args = sys.argv[1:]
    selftest = args[:1] == ["--selftest"]
    if selftest:
        args = args[1:]
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    readme = open(args[0], encoding="utf-8").read()
    helps = {}
    for program in args[1:]:
        p = subprocess.run([program, "--help"], capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            print(f"FAIL: {program} --help exited {p.returncode}")
            return 1
        helps[program] = p.stdout
    if selftest:  # each cut must be found
        cuts = {"the --twice row": "\n".join(l for l in readme.splitlines()
                                             if not (l.startswith("|") and "`--twice`" in l)),
                "exit status 77": readme.replace("77 no usable GPU", "77 no GPU")}
        before = set(problems(readme, helps))
        bad = 0
        for what, text in cuts.items():
            found = sorted(set(problems(text, helps)) - before)  # what the cut alone broke
            print(("ok   " if found else "FAIL ") + f"without {what}: {found or 'not noticed'}")
            bad += not found
        return 1 if bad else 0
    found = problems(readme, helps)
    for f in found:
        print("FAIL:", f)
    print(f"{len(helps)} programs' --help against the README: "
          f"{'FAILED' if found else 'every option and exit status in both'}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
