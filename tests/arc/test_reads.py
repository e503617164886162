"""ReadMemo: when a re-read is answered with a pointer, when a large full read is answered with
its head and an outline, and every case where either must not be."""

import ast

from blake3 import blake3

from reflex.arc.reads import OUTLINE_OVER, POINTER_PREFIX, ReadMemo, outline_answer, window_lines

PATH = "/repo/src/app.py"
TEXT = "".join("line %d of the module, long enough to be worth not repeating\n" % i for i in range(1, 41))


def h(text):
    return "b3:" + blake3(text.encode()).hexdigest()


def answer(memo, seq, text=TEXT, *, path=PATH, offset=None, limit=None, call_id=None, total_lines=None):
    return memo.answer(path=path, content_hash=h(text), offset=offset, limit=limit, text=text,
                       seq=seq, call_id=call_id, total_lines=total_lines)


def read(memo, seq, text=TEXT, **kw):
    """The pointer's text, or None (these texts are too small to be outlined)."""
    a = answer(memo, seq, text, **kw)
    assert a is None or a.kind == "pointer", a
    return None if a is None else a.content


def test_first_read_is_delivered_and_an_unchanged_reread_gets_a_verifiable_pointer():
    memo = ReadMemo()
    assert read(memo, 1, call_id="toolu_01") is None
    pointer = read(memo, 2)
    assert pointer is not None and pointer.startswith(POINTER_PREFIX)
    # names the path, the window, the hash and the call that delivered the text
    assert PATH in pointer and "lines 1-40" in pointer
    assert h(TEXT)[3:19] in pointer
    assert "call 1 (toolu_01)" in pointer
    assert len(pointer) < len(TEXT) // 5


def test_changed_bytes_are_delivered_fresh_even_without_a_recorded_edit():
    memo = ReadMemo()
    read(memo, 1)
    # a script or git changed the file: ctx saw no edit, but the hash of what the tool returned differs
    assert read(memo, 2, TEXT.replace("line 7 ", "line seven ")) is None
    # ... and the new text is what a later re-read points at
    assert "call 2" in read(memo, 3, TEXT.replace("line 7 ", "line seven "))


def test_an_edit_forgets_the_file_and_only_that_file():
    memo = ReadMemo()
    read(memo, 1)
    read(memo, 2, path="/repo/other.py")
    memo.edited(PATH)
    assert read(memo, 3) is None          # same bytes as call 1, but an edit came in between
    assert read(memo, 4, path="/repo/other.py") is not None


def test_compaction_forgets_everything():
    memo = ReadMemo()
    read(memo, 1)
    read(memo, 2, path="/repo/other.py")
    memo.compacted()
    assert len(memo) == 0
    assert read(memo, 3) is None
    assert read(memo, 4, path="/repo/other.py") is None


def test_a_pointer_is_never_answered_with_another_pointer():
    memo = ReadMemo()
    read(memo, 1)
    assert read(memo, 2) is not None
    assert read(memo, 3) is None            # asked again right after a pointer: the bytes
    assert "call 3" in read(memo, 4)      # and the next pointer names that fresh delivery


def test_windows_are_keyed_by_offset_and_limit():
    memo = ReadMemo()
    window = "".join(TEXT.splitlines(True)[4:30])
    read(memo, 1)
    assert read(memo, 2, window, offset=5, limit=26) is None   # another window: not delivered yet
    pointer = read(memo, 3, window, offset=5, limit=26)
    assert pointer is not None and "lines 5-30" in pointer
    assert read(memo, 4, window, offset=5, limit=27) is None    # another limit is another window
    # offset 1 and no offset are the same window
    assert read(memo, 5, offset=1) is not None


def test_old_deliveries_are_not_pointed_at():
    memo = ReadMemo(max_age=10)
    read(memo, 1)
    assert read(memo, 12) is None   # 11 calls later the result may have been cleared
    assert read(memo, 13) is not None


def test_small_reads_are_delivered_as_they_are():
    memo = ReadMemo()
    read(memo, 1, "x = 1\n")
    assert read(memo, 2, "x = 1\n") is None


def test_window_lines():
    assert window_lines(None, "a\nb\n") == (1, 2)
    assert window_lines(10, "a\nb\nc") == (10, 12)
    assert window_lines(3, "") == (3, 3)


# -- large full reads: the head and an outline ------------------------------------------------

def _python_module(functions=80):
    """A real Python module over OUTLINE_OVER characters: a docstring, imports, a class with
    methods, then top-level functions."""
    out = ['"""A module long enough to be outlined."""\n', "\n", "import os\n", "import sys\n", "\n\n",
           "class Store:\n", "    def __init__(self):\n", "        self.items = {}\n", "\n",
           "    @property\n", "    def size(self):\n", "        return len(self.items)\n", "\n\n"]
    for i in range(functions):
        out += ["def step_%d(value):\n" % i,
                "    # a comment long enough to make the body look like real code, %d\n" % i,
                "    total = value * %d + len(os.sep) + len(sys.argv)\n" % i,
                "    return total\n", "\n\n"]
    return "".join(out)


PY = _python_module()
PY_PATH = "/repo/src/big.py"


def _line_of(text, needle):
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def test_a_large_full_read_is_answered_with_its_true_head_and_an_outline_of_the_rest():
    assert len(PY) > OUTLINE_OVER
    a = answer(ReadMemo(), 1, PY, path=PY_PATH, total_lines=len(PY.splitlines()) + 1)
    assert a is not None and a.kind == "outline"
    head = PY.splitlines(True)[:a.shown_lines]
    # the content is the first lines exactly (line numbers stay true), without the last newline
    # (the harness would number an empty line after it)
    assert a.content == "".join(head)[:-1] and 0 < a.shown_lines <= 60
    n = len(PY.splitlines())
    assert "lines %d-%d of %d are not shown" % (a.shown_lines + 1, n, n) in a.note
    assert a.note.startswith(POINTER_PREFIX) and "not the file" in a.note
    # every definition not shown is listed with its exact range, from ast
    tree = ast.parse(PY)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.lineno > a.shown_lines:
            assert "L%d-%d def %s(value):" % (node.lineno, node.end_lineno, node.name) in a.note, node.name
    assert "offset=%d limit=" % (a.shown_lines + 1) in a.note and PY_PATH in a.note
    assert a.chars < len(PY) // 2


def test_the_outline_of_a_class_starts_at_its_decorator_and_lists_its_methods():
    text = "".join("# filler line %d to push the class below the head of the file, long enough\n" % i
                   for i in range(80)) + PY
    a = answer(ReadMemo(), 1, text, path=PY_PATH)
    start = _line_of(text, "class Store:")
    prop = _line_of(text, "@property")
    assert "L%d-%d class Store:" % (start, start + 6) in a.note
    assert "  L%d-%d def size(self):" % (prop, prop + 2) in a.note    # nested, from its decorator


def test_windows_and_small_reads_are_never_outlined():
    memo = ReadMemo()
    assert answer(memo, 1, PY, path=PY_PATH, offset=1, limit=50) is None   # a window asked for
    assert answer(memo, 2, PY, path=PY_PATH, offset=40) is None
    assert answer(memo, 3, TEXT, path="/repo/small.py") is None
    # a window from line 1 that covers the whole file is a full read
    lines = len(PY.splitlines()) + 1
    assert answer(ReadMemo(), 1, PY, path=PY_PATH, offset=1, limit=2000, total_lines=lines).kind == "outline"


def test_a_full_reread_after_an_outline_is_delivered_whole_and_then_pointed_at():
    memo = ReadMemo()
    assert answer(memo, 1, PY, path=PY_PATH).kind == "outline"
    assert answer(memo, 2, PY, path=PY_PATH) is None        # asked again: the outline starved it
    assert answer(memo, 3, PY, path=PY_PATH).kind == "pointer"   # now it has the text
    # after an edit the file is not outlined again: this model reads this file whole
    memo.edited(PY_PATH)
    assert answer(memo, 4, PY.replace("step_7", "step_seven"), path=PY_PATH) is None
    # another large file is outlined
    assert answer(memo, 5, PY, path="/repo/src/other.py").kind == "outline"


def test_the_policy_off_delivers_large_reads_whole():
    assert answer(ReadMemo(outline_over=None), 1, PY, path=PY_PATH) is None


def test_other_languages_are_outlined_by_line_pattern():
    ts = "".join("import { thing%d } from './mod%d';\n" % (i, i) for i in range(40))
    for i in range(50):
        ts += ("export function handler%d(event: Event): Result {\n"
               "  const value = compute(event, %d); // a body line long enough to look real\n"
               "  const other = transform(value, event.kind, %d); // and another one like it\n"
               "  return value;\n}\n\n" % (i, i, i))
    ts += "export interface Options {\n  verbose: boolean;\n}\n"
    a = answer(ReadMemo(), 1, ts, path="/repo/src/app.ts")
    assert a is not None and a.kind == "outline", len(ts)
    last = _line_of(ts, "handler49(")
    assert "L%d-%d export function handler49(event: Event): Result {" % (last, last + 5) in a.note
    assert "export interface Options {" in a.note and "by line pattern" in a.note


def test_markdown_headings_outside_code_fences():
    md = "# Title\n\n" + "".join("## Part %d\n\n%s\n```\n# not a heading %d\n```\n\n" % (i, "prose " * 40, i)
                                 for i in range(60))
    a = answer(ReadMemo(), 1, md, path="/repo/docs/guide.md")
    assert a is not None and "## Part 59" in a.note and "not a heading" not in a.note


def test_no_outline_when_it_would_say_too_little():
    data = "".join('  "key_%d": "a value long enough to make this json file large",\n' % i for i in range(400))
    text = "{\n" + data + "}\n"
    assert len(text) > OUTLINE_OVER
    assert answer(ReadMemo(), 1, text, path="/repo/data.json") is None   # no definitions: whole
    assert outline_answer(path="/repo/one.py", text="x = [\n" + "    1,\n" * 3000 + "]\n") is None


def test_an_outline_over_its_budget_keeps_the_outer_level_and_says_what_is_left_out():
    many = "".join("class Model%d:\n    def method_%d(self):\n        return %d\n\n" % (i, i, i) for i in range(400))
    a = outline_answer(path=PY_PATH, text=many)
    assert "class Model399:" not in a.note and "def method_" not in a.note   # nested entries dropped first
    assert "more entries in lines" in a.note and len(a.note) < 4000


def test_a_read_the_harness_stopped_early_says_so():
    a = outline_answer(path=PY_PATH, text=PY, total_lines=5000)
    assert "(The Read itself stopped at line %d of 5000.)" % len(PY.splitlines()) in a.note
