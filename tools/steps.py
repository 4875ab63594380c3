#!/usr/bin/env python3
"""The steps of the tutorial: one file per step, each read against the step before it.

usage: tools/steps.py list [CHAPTER]          every step: kernel, file, previous, diff size
                                              (CHAPTER: 08_hopper, or 08)
       tools/steps.py diff STEP               what this step adds: a diff against the previous
       tools/steps.py check                   (a host test) the recorded diff sizes still hold
       tools/steps.py record                  re-record the diff sizes after a deliberate edit
       tools/steps.py selftest                check fails on an edited step file
       tools/steps.py selftest-exercises      with every exercise written (a solution over
                                              each skeleton) check passes; an edited solution
                                              or wrong body fails it
       tools/steps.py selftest-names          diff finds a step by CHAPTER/NAME, refuses a
                                              name two chapters share, shows the answer's rule

STEP is a step's name (its KERNEL below, or the name its chapter's program gives it: 08's
`hopper_raster` is `--kernel raster`), or CHAPTER/NAME, CHAPTER a folder or its number:
`diff 07_pipelined/raster`, `diff 08/raster`. A bare name that two chapters share is refused
(exit 2) with the choices on one line: `diff raster` names chapter 07's step and chapter 08's.

Each chapter lists its steps in NN_chapter/steps/steps.txt, in reading order, one line each:

    KERNEL  FILE  PREVIOUS  DIFF  [note]      FILE in NN_chapter/steps/, PREVIOUS a path from
                                              the repository root, DIFF the changed lines
    KERNEL  FILE  -         -     [note]      a step that starts something new: `diff` shows
                                              the whole file, every line added
    KERNEL  FILE  =         note              the same file as the step above: the step changes
                                              only an argument of its template or launch (the
                                              note says which); `diff` shows its launcher's
    +       PATH  [HEADING]                   what the step above also adds, in a file that is
                                              not a step (PATH from the repository root): the
                                              section of PATH that starts at the comment line
                                              `// --- HEADING`, up to the next `// --- ` line,
                                              or all of PATH; `diff` shows it after the step's
                                              own lines, every line added

DIFF is the number of lines `diff` adds and removes between PREVIOUS and FILE. The exercises
are copies too (NN_chapter/exercises/copies.txt: FILE PREVIOUS DIFF): the solution of the step
it rebuilds, and each deliberately wrong (or slow) body of the solution. The reader's own file,
NN_chapter/exercises/NAME.cuh, is never read: it is theirs to write, and a written exercise
must leave this check green. `check` fails where a step and the step it was copied from have
drifted apart (the count moved), where a diff is over 400 lines, where a file in steps/ is not
listed, or where copies.txt names a file outside exercises/solutions/ and exercises/wrong/.
After a deliberate change, `record` writes the new counts (and the commit says why they moved).
"""
import difflib
import glob
import os
import re
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_DIFF = 400


class Step:
    def __init__(self, chapter, line_no, fields, note):
        self.chapter, self.line_no = chapter, line_no
        self.kernel, self.file, self.previous = fields[0], fields[1], fields[2]
        self.diff = None
        self.note = note
        self.path = f"{chapter}/steps/{self.file}"
        self.extra = []   # (PATH, HEADING or None) of the `+` lines below it
        self.names = [self.kernel]  # and the names its chapter's program gives it (aliases)

    def __repr__(self):
        return f"{self.chapter} {self.kernel}"


def manifests(root=ROOT):
    return sorted(glob.glob(os.path.join(root, "[0-9][0-9]_*", "steps", "steps.txt")))


def parse(path, root=ROOT):
    chapter = os.path.basename(os.path.dirname(os.path.dirname(path)))
    steps = []
    for i, raw in enumerate(open(path).read().split("\n"), 1):
        line = raw.split("#", 1)[0].strip() if raw.lstrip().startswith("#") else raw.strip()
        if not line:
            continue
        f = line.split()
        if f[0] == "+":
            if len(f) < 2 or not steps:
                raise ValueError(f"{path}:{i}: '+ PATH [HEADING]' needs a PATH and a step above")
            steps[-1].extra.append((f[1], " ".join(f[2:]) or None))
            continue
        if len(f) < 3:
            raise ValueError(f"{path}:{i}: KERNEL FILE PREVIOUS [DIFF] [note]")
        if f[2] == "=":
            s = Step(chapter, i, f[:3], " ".join(f[3:]))
            if not steps:
                raise ValueError(f"{path}:{i}: '=' needs a step above it")
            s.same_as = steps[-1] if steps[-1].previous != "=" else steps[-1].same_as
            if s.same_as.file != s.file:
                raise ValueError(f"{path}:{i}: '=' means the file of the step above")
        else:
            if len(f) < 4:
                raise ValueError(f"{path}:{i}: the diff size is missing ('-' for none)")
            s = Step(chapter, i, f[:3], " ".join(f[4:]))
            s.diff = None if f[3] == "-" else int(f[3])
        steps.append(s)
    return steps


def all_steps(root=ROOT):
    steps = [s for m in manifests(root) for s in parse(m, root)]
    for s in steps:
        alias = registry_names(root, s.chapter).get(s.kernel)
        s.names += [a for a in alias or [] if a != s.kernel]
    return steps


REGISTRY = re.compile(r'\{\s*"(\w+)"\s*,\s*[\w:]+\s*,\s*launch_(\w+)\b')


def registry_names(root, chapter):
    """{launch function's name without launch_: [the names --kernel gives it]}, read from the
    chapter program's kernel table ({"raster", kBt, launch_hopper_raster}: 08's `raster`)."""
    out = {}
    for f in sorted(glob.glob(os.path.join(root, chapter, "*.cu"))):
        for name, fn in REGISTRY.findall(open(f).read()):
            out.setdefault(fn, []).append(name)
    return out


def address(step, name=None):
    return f"{step.chapter}/{name or step.kernel}"


def find_steps(query, steps):
    """The steps STEP names: a step's name (or its program's name for it) in every chapter, or
    CHAPTER/NAME in one (CHAPTER its folder, or the folder's number: 08/raster)."""
    chapter, _, name = query.rpartition("/")
    chapter = chapter.strip("/")
    return [s for s in steps if name in s.names and
            (not chapter or chapter in (s.chapter, s.chapter.split("_")[0]))]


def section_text(root, path, heading):
    """(first line number, lines) of PATH's section `// --- HEADING` (to the next `// --- `
    heading), or of all of PATH when heading is None; (0, []) when there is no such section."""
    lines = read(root, path)
    if heading is None:
        return 1, lines[:-1] if lines and lines[-1] == "" else lines
    for i, line in enumerate(lines):
        if line.startswith("// --- " + heading):
            end = next((j for j in range(i + 1, len(lines))
                        if re.match(r"// --- \S", lines[j])), len(lines))
            while end > i + 1 and not lines[end - 1].strip():
                end -= 1
            return i + 1, lines[i:end]
    return 0, []


def added(path, first, lines, label=""):
    """lines as a diff from nothing: what a step adds where there is nothing to diff against."""
    out = ["--- /dev/null", f"+++ {path}{label}", f"@@ -0,0 +{first},{len(lines)} @@"]
    return out + ["+" + line for line in lines]


def read(root, rel):
    with open(os.path.join(root, rel)) as f:
        return f.read().split("\n")


def diff_lines(root, a, b):
    return list(difflib.unified_diff(read(root, a), read(root, b), a, b, lineterm=""))


def changed(lines):
    return sum(1 for d in lines if d[:1] in "+-" and not d.startswith(("+++", "---")))


def function_text(lines, name):
    """The text of the function `name` (from its signature line to its closing brace)."""
    for i, line in enumerate(lines):
        if re.search(rf"\b{re.escape(name)}\s*\(", line) and not line.rstrip().endswith(";"):
            depth, out = 0, []
            for line2 in lines[i:]:
                out.append(line2)
                depth += line2.count("{") - line2.count("}")
                if depth == 0 and "}" in line2:
                    return out
    return []


def show_diff(step, root=ROOT):
    if step.previous == "=":
        base = step.same_as
        print(f"{step.kernel} shares {step.path} with {base.kernel}: {step.note}")
        lines = read(root, step.path)
        a, b = function_text(lines, f"launch_{base.kernel}"), \
            function_text(lines, f"launch_{step.kernel}")
        if a and b:
            sys.stdout.writelines(d + "\n" for d in difflib.unified_diff(
                a, b, f"launch_{base.kernel}", f"launch_{step.kernel}", lineterm=""))
    elif step.previous == "-":
        first, lines = section_text(root, step.path, None)
        sys.stdout.writelines(d + "\n" for d in added(step.path, first, lines))
        print(f"# {len(lines)} lines, a new file: {step.kernel} starts something new"
              + (f" ({step.note})" if step.note else ""), file=sys.stderr)
    else:
        d = diff_lines(root, step.previous, step.path)
        sys.stdout.writelines(line + "\n" for line in d)
        print(f"# {changed(d)} lines changed ({step.previous} -> {step.path})", file=sys.stderr)
    for path, heading in step.extra:
        first, lines = section_text(root, path, heading)
        label = f' (the section "{heading}")' if heading else ""
        sys.stdout.writelines(d + "\n" for d in added(path, first, lines, label))
        print(f"# and {path}{label}, lines {first}-{first + len(lines) - 1}: {step.kernel}'s "
              "idea too, outside its step file", file=sys.stderr)
    return 0


def check(root=ROOT, record=False):
    problems, listed = [], set()
    for m in manifests(root):
        try:
            steps = parse(m, root)
        except ValueError as e:
            problems.append(str(e))
            continue
        text = open(m).read().split("\n")
        for s in steps:
            listed.add(os.path.join(root, s.path))
            if not os.path.exists(os.path.join(root, s.path)):
                problems.append(f"{s.path}: listed for {s.kernel}, but missing")
                continue
            if not any(re.search(rf"\blaunch_{re.escape(s.kernel)}\s*\(", line)
                       for line in read(root, s.path)):
                problems.append(f"{s.path}: no launch_{s.kernel} in it")
            for path, heading in s.extra:
                if not os.path.exists(os.path.join(root, path)):
                    problems.append(f"{m}:{s.line_no}: {s.kernel}'s '+ {path}' is missing")
                elif not section_text(root, path, heading)[1]:
                    problems.append(f"{path}: no section '// --- {heading}' ({s.kernel}'s '+' "
                                    f"line in {os.path.relpath(m, root)})")
            if s.previous in ("-", "="):
                continue
            if not os.path.exists(os.path.join(root, s.previous)):
                problems.append(f"{m}:{s.line_no}: previous {s.previous} is missing")
                continue
            n = changed(diff_lines(root, s.previous, s.path))
            if n > MAX_DIFF:
                problems.append(f"{s.path}: {n} lines differ from {s.previous}, over "
                                f"{MAX_DIFF}: more than one idea")
            if record and n != s.diff:
                text[s.line_no - 1] = re.sub(r"^(\S+\s+\S+\s+\S+\s+)\S+", lambda mm: mm.group(1) +
                                             str(n), text[s.line_no - 1])
                print(f"{s.path}: {s.diff} -> {n} lines against {s.previous}")
            elif n != s.diff:
                problems.append(f"{s.path}: {n} lines differ from {s.previous}, but {s.diff} are "
                                f"recorded in {os.path.relpath(m, root)}: the copies drifted "
                                "(tools/steps.py diff " + s.kernel + "; after a deliberate "
                                "change, tools/steps.py record)")
        if record:
            open(m, "w").write("\n".join(text))
    for m in manifests(root):
        for f in glob.glob(os.path.join(os.path.dirname(m), "*.cuh")):
            if f not in listed:
                problems.append(f"{os.path.relpath(f, root)}: not listed in steps.txt")
    problems += check_exercises(root, record)
    return problems


def exercise_manifests(root=ROOT):
    return sorted(glob.glob(os.path.join(root, "[0-9][0-9]_*", "exercises", "copies.txt")))


COPY_FOLDERS = ("solutions/", "wrong/")  # what copies.txt may name: never the reader's file


def exercise_copies(manifest):
    """(line index, FILE, PREVIOUS, DIFF) of each copy a copies.txt lists."""
    out = []
    for i, raw in enumerate(open(manifest).read().split("\n")):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        f = raw.split()
        if len(f) < 3:
            raise ValueError(f"{manifest}:{i + 1}: FILE PREVIOUS DIFF")
        out.append((i, f[0], f[1], int(f[2])))
    return out


def check_exercises(root=ROOT, record=False):
    """The exercises are copies too: the solution of the step it rebuilds, each wrong body of
    the solution. NN_chapter/exercises/copies.txt lists each copy, FILE PREVIOUS DIFF, FILE
    relative to the folder, PREVIOUS from the repository root. Neither may be the reader's
    file (exercises/NAME.cuh): only solutions/ and wrong/ are read."""
    problems = []
    for m in exercise_manifests(root):
        folder = os.path.relpath(os.path.dirname(m), root)
        text = open(m).read().split("\n")
        try:
            copies = exercise_copies(m)
        except ValueError as e:
            problems.append(str(e))
            continue
        for i, rel, prev, want in copies:
            path = f"{folder}/{rel}"
            readers = [p for p in (path, prev) if p.startswith(folder + "/") and
                       not p[len(folder) + 1:].startswith(COPY_FOLDERS)]
            if readers:
                problems.append(f"{os.path.relpath(m, root)}:{i + 1}: {readers[0]} is not in "
                                "solutions/ or wrong/: the reader's own file is never read")
                continue
            if not (os.path.exists(os.path.join(root, path)) and
                    os.path.exists(os.path.join(root, prev))):
                problems.append(f"{os.path.relpath(m, root)}:{i + 1}: {path} or {prev} is missing")
                continue
            n = changed(diff_lines(root, prev, path))
            if record and n != want:
                text[i] = re.sub(r"^(\S+\s+\S+\s+)\S+", lambda mm: mm.group(1) + str(n), text[i])
                print(f"{path}: {want} -> {n} lines against {prev}")
            elif n != want:
                problems.append(f"{path}: {n} lines differ from {prev}, but {want} are recorded in "
                                f"{os.path.relpath(m, root)}: the copies drifted (after a "
                                "deliberate change, tools/steps.py record)")
        if record:
            open(m, "w").write("\n".join(text))
    return problems


def copy_tree(tmp):
    """The files check reads (steps, manifests, exercises and what they are read against),
    copied under tmp."""
    def put(rel):
        os.makedirs(os.path.join(tmp, os.path.dirname(rel)), exist_ok=True)
        shutil.copy(os.path.join(ROOT, rel), os.path.join(tmp, rel))
    steps = all_steps()
    for s in steps:
        for rel in (s.path, s.previous) + tuple(path for path, _ in s.extra):
            if rel not in ("-", "="):
                put(rel)
    for m in manifests() + exercise_manifests():
        put(os.path.relpath(m, ROOT))
    for m in exercise_manifests():
        folder = os.path.dirname(m)
        for _, _, prev, _ in exercise_copies(m):
            put(prev)
        for f in glob.glob(os.path.join(folder, "**", "*.cuh"), recursive=True):
            put(os.path.relpath(f, ROOT))
    return steps


def edit_one_line(path):
    """An edit made to one copy and not the other: a line before the first kernel."""
    with open(path) as f:
        lines = f.read().split("\n")
    i = next((i for i, l in enumerate(lines) if "__global__" in l), len(lines) // 2)
    lines.insert(i, "// an edit made to one copy and not the other")
    with open(path, "w") as f:
        f.write("\n".join(lines))


def selftest():
    """Copy the step files, edit one line of one that has a recorded diff: check must fail."""
    with tempfile.TemporaryDirectory() as tmp:
        steps = copy_tree(tmp)
        if check(tmp):
            print("selftest: the tree does not pass check to begin with")
            return 1
        target = next(s for s in steps if s.diff is not None)
        edit_one_line(os.path.join(tmp, target.path))
        problems = check(tmp)
        print(f"edited {target.path}; check says:")
        print("\n".join("  " + p for p in problems))
        ok = any("drifted" in p for p in problems)
        print("selftest: check " + ("fails on the edited step file, as it must" if ok
                                   else "did NOT notice the edit"))
        return 0 if ok else 1


def selftest_exercises():
    """A reader who has written every exercise: each solution copied over its skeleton, and
    the skeleton's marked line gone. check must pass (it never reads the reader's files). Then
    an edited solution, and an edited wrong body, must each fail it."""
    with tempfile.TemporaryDirectory() as tmp:
        copy_tree(tmp)
        written = []
        for m in exercise_manifests(tmp):
            folder = os.path.dirname(m)
            for sol in sorted(glob.glob(os.path.join(folder, "solutions", "*.cuh"))):
                skeleton = os.path.join(folder, os.path.basename(sol))
                if os.path.exists(skeleton):
                    shutil.copy(sol, skeleton)
                    with open(skeleton, "a") as f:  # and a line of the reader's own
                        f.write("// the reader's note: written, and it passes\n")
                    written.append(os.path.relpath(skeleton, tmp))
        if not written:
            print("selftest-exercises: no skeleton found to write over")
            return 1
        problems = check(tmp)
        print(f"wrote a solution over {len(written)} skeletons ({', '.join(written)}); check "
              "says: " + ("every recorded diff holds" if not problems else ""))
        print("\n".join("  " + p for p in problems))
        if problems:
            print("selftest-exercises: check FAILS with the exercises written: it must not")
            return 1
        ok = True
        for kind in ("solutions", "wrong"):
            m = exercise_manifests(tmp)[0]
            folder = os.path.dirname(m)
            rel = next(r for _, r, _, _ in exercise_copies(m) if r.startswith(kind + "/"))
            target = os.path.join(folder, rel)
            saved = open(target).read()
            edit_one_line(target)
            problems = check(tmp)
            open(target, "w").write(saved)
            seen = any("drifted" in p for p in problems)
            print(f"edited {os.path.relpath(target, tmp)}: check " +
                  ("fails, as it must" if seen else "did NOT notice the edit"))
            ok = ok and seen
        print("selftest-exercises: " + ("written exercises leave check green; edited copies "
                                        "fail it" if ok else "FAILED"))
        return 0 if ok else 1


def diff_command(query, root=ROOT):
    """diff STEP: the one step STEP names; none, or a bare name two chapters share, is refused
    in one line on stderr (exit 2), never answered with one chapter's step."""
    found = find_steps(query, all_steps(root))
    if not found:
        print(f"no step named {query} (tools/steps.py list; a step in one chapter: "
              "CHAPTER/NAME)", file=sys.stderr)
        return 2
    if len(found) > 1:
        name = query.rpartition("/")[2]
        choices = ", ".join(address(s, name) + ("" if s.kernel == name else
                                                f" (step {s.kernel})") for s in found)
        print(f"{query} names {len(found)} steps, give one: {choices}", file=sys.stderr)
        return 2
    return show_diff(found[0], root)


def selftest_names():
    """diff's STEP: a bare name two chapters share is refused in one line with the choices;
    CHAPTER/NAME finds each; the program's name for a step finds it; the answer's step shows
    its measured choice and the shape rule, and the step before it does not."""
    import subprocess

    def run(*args):
        p = subprocess.run([sys.executable, os.path.abspath(__file__)] + list(args),
                           capture_output=True, text=True)
        return p.returncode, p.stdout, p.stderr

    ok = True

    def expect(what, cond):
        nonlocal ok
        print(("ok   " if cond else "FAIL ") + what)
        ok = ok and cond

    rc, out, err = run("diff", "raster")
    expect("diff raster: exit 2, one line naming 07_pipelined/raster and 08_hopper/raster",
           rc == 2 and not out and len(err.strip().splitlines()) == 1 and
           "07_pipelined/raster" in err and "08_hopper/raster" in err)
    for q in ("07_pipelined/raster", "07/raster"):
        rc, out, err = run("diff", q)
        expect(f"diff {q}: chapter 07's step, 4_raster.cuh against 3_spread.cuh",
               rc == 0 and "+++ 07_pipelined/steps/4_raster.cuh" in out)
    for q in ("08_hopper/raster", "08/raster", "hopper_raster"):
        rc, out, err = run("diff", q)
        expect(f"diff {q}: chapter 08's step, launch_hopper_raster against launch_warp_spec",
               rc == 0 and "+++ launch_hopper_raster" in out and "07_pipelined" not in out)
    for q in ("no_such_step", "07_pipelined/warp_spec"):
        rc, out, err = run("diff", q)
        expect(f"diff {q}: exit 2, one line", rc == 2 and not out and
               len(err.strip().splitlines()) == 1)
    rc, out, err = run("diff", "hopper")
    expect("diff hopper: the measured choice (tuned_hopper) and the shape rule (hopper_cost, "
           "hopper_candidates), every line added",
           rc == 0 and "+HopperChoice tuned_hopper(" in out and
           "+constexpr double hopper_cost(" in out and "+constexpr int hopper_candidates(" in out)
    rc, out, err = run("diff", "wg1_64x128")
    expect("diff wg1_64x128: the one-warpgroup kernel, without the tuner or the rule",
           rc == 0 and "one_wg_kernel" in out and "tuned_hopper(" not in out and
           "hopper_cost(" not in out)
    with tempfile.TemporaryDirectory() as tmp:  # a '+' line whose section is gone fails check
        steps = copy_tree(tmp)
        s = next(s for s in steps if any(heading for _, heading in s.extra))
        path, heading = next((p, h) for p, h in s.extra if h)
        text = open(os.path.join(tmp, path)).read()
        open(os.path.join(tmp, path), "w").write(text.replace("// --- " + heading, "// " + heading))
        problems = check(tmp)
        expect(f"check, with the heading '{heading}' gone from a copy of {path}: fails",
               any("no section" in p for p in problems))
    print("selftest-names: " + ("diff finds every step by one name, refuses a shared one"
                                if ok else "FAILED"))
    return 0 if ok else 1


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) >= 2 else 2
    cmd, rest = sys.argv[1], sys.argv[2:]
    if cmd == "list":
        for s in all_steps():
            if rest and rest[0].strip("/") not in (s.chapter, s.chapter.split("_")[0]):
                continue
            size = "same file" if s.previous == "=" else ("new" if s.previous == "-" else
                                                          f"{s.diff} lines")
            prev = s.same_as.kernel if s.previous == "=" else s.previous
            also = "".join(f" + {path}" for path, _ in s.extra)
            named = "".join(f" (--kernel {n})" for n in s.names[1:])
            print(f"{s.chapter:<18} {s.kernel:<20} {s.file:<24} {size:<10} {prev}{also}{named}")
        return 0
    if cmd == "diff":
        if len(rest) != 1:
            print("usage: tools/steps.py diff STEP (a step's name, or CHAPTER/NAME)",
                  file=sys.stderr)
            return 2
        return diff_command(rest[0])
    if cmd in ("check", "record"):
        problems = check(record=cmd == "record")
        for p in problems:
            print(p)
        if cmd == "check":
            print(f"{len(all_steps())} steps; " + ("every recorded diff holds" if not problems
                                                    else f"{len(problems)} problem(s)"))
        return 1 if problems else 0
    if cmd == "selftest":
        return selftest()
    if cmd == "selftest-exercises":
        return selftest_exercises()
    if cmd == "selftest-names":
        return selftest_names()
    print(f"unknown command {cmd}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # diff ... | head
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
