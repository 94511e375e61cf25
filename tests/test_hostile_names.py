"""Names from robot files are data: whatever a URDF's or an MJCF's names hold, the C that
soagen writes is the C of the same robot with plain names (comments aside), it compiles,
and it matches the reference; a name that could end a comment never runs as code.

Every name reaches emitted text through :mod:`soagen.targets.common.inert` alone."""
from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import soagen
from soagen import codegen
from soagen.model.errors import ModelWarning, RobotError
from soagen.options import Options
from soagen.reports import opcount
from soagen.targets.c99.emit import emit
from soagen.targets.casadi.emit import emit_casadi
from soagen.targets.cuda.emit import emit_cuda
from soagen.targets.simd.emit import emit_simd
from soagen.targets.common.inert import c_name, comment_text, markdown_text
from tests.support.robots import planar_2link

#: pieces of hostile names: comment ends and starts, a line comment, a backslash and the trigraph
#: that is one under -std=c99, quotes, a directive, whitespace and control characters that XML
#: can carry (as character references), non-ASCII, and the escape's own form
PIECES = ["*/", "/*", "//", "\\", "??/", "??", "?", "/", "*", '"', "'", "#", "\n", "\t", "\r", "%",
          "<U+", "<", ">", "&", ";", "{", "}", " ", "é", "Ω", "\u2028", "\U0001F4A5", "a", "Z", "_", "0"]
NAME = st.lists(st.sampled_from(PIECES), min_size=1, max_size=8).map("".join)
#: eight distinct names (link and body names must differ), each with a letter (a plain twin exists)
NAMES = st.lists(NAME, min_size=8, max_size=8, unique=True).map(lambda ns: [f"x{n}" for n in ns])
FUNCTIONS = ("inverse_dynamics", "jacobian", "os_inertia", "mass_matrix_inverse")
PLAIN = ["robot", "link1", "joint1", "link2", "joint2", "link3", "joint3", "tip"]
#: the arm's moving links and joints: (axis, the joint's origin in its parent)
ARM = (("0 0 1", "0 0 0.2"), ("0 1 0", "0.3 0 0.1"), ("1 0 0", "0.25 0.05 0"))


def urdf_text(names):
    """A three-joint arm: robot, (link, joint) x 3, and the tip link (fixed to link 3)."""
    robot, *arm, tip = names
    root = ET.Element("robot", name=robot)
    ET.SubElement(root, "link", name="base")
    parent = "base"
    for k, (axis, xyz) in enumerate(ARM):
        link, joint = arm[2 * k], arm[2 * k + 1]
        el = ET.SubElement(ET.SubElement(root, "link", name=link), "inertial")
        ET.SubElement(el, "origin", xyz="0.1 0.02 0.05")
        ET.SubElement(el, "mass", value=f"{1.5 - 0.4 * k}")
        ET.SubElement(el, "inertia", ixx="0.02", iyy="0.03", izz="0.04", ixy="0.001", ixz="0", iyz="0.002")
        el = ET.SubElement(root, "joint", name=joint, type="revolute")
        ET.SubElement(el, "parent", link=parent)
        ET.SubElement(el, "child", link=link)
        ET.SubElement(el, "origin", xyz=xyz)
        ET.SubElement(el, "axis", xyz=axis)
        ET.SubElement(el, "limit", lower="-3", upper="3", effort="10", velocity="1")
        parent = link
    ET.SubElement(root, "link", name=tip)
    el = ET.SubElement(root, "joint", name=f"{tip} weld", type="fixed")
    ET.SubElement(el, "parent", link=parent)
    ET.SubElement(el, "child", link=tip)
    ET.SubElement(el, "origin", xyz="0.3 0 0.1")
    return ET.tostring(root, encoding="unicode")


def mjcf_text(names):
    """The same arm as MJCF: model, (body, joint) x 3, and the tip as a site."""
    model, *arm, site = names
    root = ET.Element("mujoco", model=model)
    parent = ET.SubElement(root, "worldbody")
    for k, (axis, pos) in enumerate(ARM):
        parent = ET.SubElement(parent, "body", name=arm[2 * k], pos=pos)
        ET.SubElement(parent, "joint", name=arm[2 * k + 1], type="hinge", axis=axis)
        ET.SubElement(parent, "inertial", pos="0.1 0.02 0.05", mass=f"{1.5 - 0.4 * k}",
                      fullinertia="0.02 0.03 0.04 0.001 0 0.002")
    ET.SubElement(parent, "site", name=site, pos="0.3 0 0.1")
    return ET.tostring(root, encoding="unicode")


def load(kind, names, folder):
    path = folder / ("robot.urdf" if kind == "urdf" else "robot.xml")
    path.write_text(urdf_text(names) if kind == "urdf" else mjcf_text(names), encoding="utf-8")
    loader = soagen.load_urdf if kind == "urdf" else soagen.load_mjcf
    return loader(path, tips=[soagen.point_tip(names[-1])])


def compiled_view(csource, folder):
    """The header and source as the compiler reads them: ``gcc -std=c99 -E -P`` (comments gone,
    trigraphs and line splices applied, the includes expanded), blank lines dropped."""
    folder.mkdir(exist_ok=True)
    (folder / f"{csource.name}.h").write_text(csource.header)
    (folder / f"{csource.name}.c").write_text(csource.source)
    res = subprocess.run(["gcc", "-std=c99", "-E", "-P", "-I", str(folder), str(folder / f"{csource.name}.c")],
                         capture_output=True, text=True, check=True)
    return [line for line in res.stdout.splitlines() if line.strip()]


def other_views(robot, programs):
    """The SIMD, CUDA and CasADi texts as a preprocessor reads them (``gcc -E -P -x c``: comments
    gone, trigraphs and line splices applied), their #include lines left out."""
    texts = [emit_simd(robot, programs, "robot").source, emit_cuda(robot, programs, "robot").source,
             emit_casadi(robot, programs, "robot").source]
    views = []
    for text in texts:
        text = "\n".join(line for line in text.splitlines() if not line.startswith("#include"))
        res = subprocess.run(["gcc", "-std=c99", "-E", "-P", "-x", "c", "-"], input=text, capture_output=True,
                             text=True, check=True)
        views.append([line for line in res.stdout.splitlines() if line.strip()])
    return views, texts


@pytest.fixture(scope="module")
def plain_views(tmp_path_factory):
    """The plain-named arm's C (as the compiler reads it) and its SIMD, CUDA and CasADi texts
    (as the preprocessor reads them), by file kind (recorded once)."""
    folder = tmp_path_factory.mktemp("plain")
    views = {}
    for kind in ("urdf", "mjcf"):
        robot = load(kind, PLAIN, folder)
        programs, _ = codegen.programs(robot, Options(functions=FUNCTIONS))
        views[kind] = compiled_view(emit(robot, programs, "robot"), folder / kind), other_views(robot, programs)[0]
    return views


@pytest.mark.parametrize("kind", ["urdf", "mjcf"])
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(names=NAMES)
def test_hostile_names_give_the_plain_robots_c(kind, names, plain_views, tmp_path_factory):
    """Hostile names in every slot (robot/model, links/bodies, joints, tip link or site): the
    emitted C, as the compiler reads it, is the plain-named robot's, and its text is printable
    ASCII with every name's characters accounted for."""
    folder = tmp_path_factory.mktemp(kind)
    robot = load(kind, names, folder)
    programs, _ = codegen.programs(robot, Options(functions=FUNCTIONS))
    csource = emit(robot, programs, "robot")
    views, texts = other_views(robot, programs)
    for text in (csource.header, csource.source, *texts):
        assert text.isascii() and not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", text)
        assert "??" not in text and "\\" not in text.replace("\\n\"", "")   # only the C strings' own \n
    assert comment_text(names[0]) in csource.header          # the robot's name, visible in the banner
    title = opcount.table(robot.name, programs).split("\n", 1)[0]   # opcounts.md: the name on its title line
    assert title == f"# Operation counts: {markdown_text(robot.name)}"
    assert compiled_view(csource, folder / "c") == plain_views[kind][0]
    assert views == plain_views[kind][1]                     # SIMD, CUDA, CasADi


def test_comment_text_is_inert_and_one_to_one():
    """No comment delimiter, trigraph, backslash, quote or control character survives, at the
    ends of a value either, and two names never print alike."""
    samples = ["*/", "/*", "//", "a*/", "/*a", "*", "/", "??/", "a??", "\\", '"', "\n", "\x01", "é", "<U+0041>",
               "<U+", "<", "a/", "*a", "x ?", "plain_name"]
    printed = [comment_text(s) for s in samples]
    assert len(set(printed)) == len(samples)
    for s, p in zip(samples, printed):
        assert p.isascii() and p.isprintable()
        for bad in ("*/", "/*", "//", "??", "\\", '"'):
            assert bad not in p
        assert p[:1] not in "/*?" and p[-1:] not in "/*?"
        for before, after in (("/* ", " */"), ('"', '"'), ("// ", "")):  # the template's text around it
            assert (before + p + after).count("*/") == (before + after).count("*/")
    assert comment_text("plain_name (revolute, parent 0)") == "plain_name (revolute, parent 0)"


#: names that are markup on a Markdown page or in its HTML: a tag with a script, a table cell's end,
#: emphasis, code, a link, a heading's closing '#', an entity
MARKUP = ["<img src=x onerror=alert(1)>", "a|b", "*bold*", "_em_", "`code`", "[l](http://e)", "x #", "&amp;",
          "~~s~~", "![i](j)", "<script>", "a\\|b"]


def _markup_free(text):
    """True when ``text`` has no raw '<' or '>', and each of Markdown's punctuation and '&' is escaped
    (a backslash before it, or an entity's own '&')."""
    unescaped = re.sub(r"\\[`*_\[\]|#~!]|&(amp|lt|gt);", "", text)
    return not re.search(r"[<>`*_\[\]|#~!&\\]", unescaped)


def test_markdown_text_is_inert_and_one_to_one():
    printed = [markdown_text(s) for s in MARKUP + ["plain name", "ur5", "a/b"]]
    assert len(set(printed)) == len(printed)
    for s, p in zip(MARKUP, printed):
        assert p.isascii() and p.isprintable() and _markup_free(p), (s, p)
    assert markdown_text("<img src=x onerror=alert(1)>") == "&lt;img src=x onerror=alert(1)&gt;"
    assert markdown_text("a|b") == "a\\|b" and markdown_text("panda") == "panda"


@pytest.mark.parametrize("name", MARKUP)
def test_report_titles_show_a_name_and_no_markup(name, tmp_path, monkeypatch):
    """opcounts.md, footprint.md and the parameters and profile reports print the robot's name through
    markdown_text: a title and a table row that are the name's text, never HTML or a new cell."""
    from soagen.reports import parameters, profile
    from soagen.targets.mcu import qemu

    safe = markdown_text(name)
    assert _markup_free(safe)
    assert opcount.table(name, []).split("\n", 1)[0] == f"# Operation counts: {safe}"
    monkeypatch.setattr(qemu, "_cells_table", lambda *a: [])          # no cross-compiler needed for the title
    assert qemu.footprint_table(None, name, tmp_path).split("\n", 1)[0] == \
        f"# Footprint: {safe} (float, arm-none-eabi-gcc)"
    robot = dataclasses.replace(planar_2link(), name=name)
    text = parameters.report([robot])
    assert f"\n| {safe} | 2 | 20 | 6 |" in text and f"\n## {safe}: β = K π\n" in text
    result = profile.Profile(name, 6, "O0", 1)
    result.rows.append(dict(name="gravity", statements=1, record=0.0, cse=0.0, emit=0.0, compile=0.0))
    result.wall.update(generate=0.0, emit=0.0, compile=0.0, total=0.0)
    result.peak_mb["all"] = 1.0
    row = profile.markdown_row(result)
    assert row.startswith(f"| {safe} | 6 | 1 | 1 |") and row.count("|") - row.count("\\|") == 13, row


@pytest.mark.parametrize("name, identifier", [("ur5-arm", "ur5_arm"), ("6dof", "r_6dof"), ("a */ b", "a_b"),
                                              ("é1", "r_1")])
def test_c_name_keeps_letters_digits_underscores(name, identifier):
    with pytest.warns(ModelWarning, match=f"is '{identifier}' in C"):
        assert c_name(name) == identifier


@pytest.mark.parametrize("name", ["", "*/", "é", "??/ \n", "___"])
def test_a_name_with_no_identifier_is_refused(name):
    with pytest.raises(RobotError, match="gives no C identifier"):
        c_name(name)


def test_refused_robot_name_is_one_line_from_the_cli(tmp_path):
    """A robot whose name leaves no identifier: one line, naming --name, nothing written."""
    path = tmp_path / "r.urdf"
    path.write_text(urdf_text(["*/ */", *PLAIN[1:]]))
    out = tmp_path / "out"
    res = subprocess.run([sys.executable, "-m", "soagen", "generate", str(path), "--point-tip", "tip", "--out", str(out)],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert "gives no C identifier" in res.stderr and "--name" in res.stderr and not out.exists()


PAYLOAD = ('x */ __attribute__((constructor)) static void soagen_payload(void) {{ FILE *f = fopen("{marker}", "w"); '
           'if (f) fclose(f); }} /* ??/\n')


@pytest.mark.parametrize("kind", ["urdf", "mjcf"])
def test_a_payload_in_every_name_never_runs_and_check_passes(kind, tmp_path):
    """A constructor that writes a marker file, in every name of the file (and as the tip):
    `soagen check` compiles the module, loads it and passes, and no marker appears."""
    marker = tmp_path / "MARKER"
    names = [PAYLOAD.format(marker=marker) + tag for tag in PLAIN]
    path = tmp_path / ("robot.urdf" if kind == "urdf" else "robot.xml")
    path.write_text(urdf_text(names) if kind == "urdf" else mjcf_text(names), encoding="utf-8")
    res = subprocess.run([sys.executable, "-m", "soagen", "check", str(path), "--point-tip", names[-1], "--optimize", "O0",
                          "--samples", "10", "--quiet", *(a for f in FUNCTIONS for a in ("--function", f))],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0 and "PASS" in res.stdout and "FAIL" not in res.stdout, res.stdout + res.stderr
    assert not marker.exists()
    assert shutil.which("gcc")
