"""What a child sees of the machine: the folders and files the zygote's jail binds read-only into
its new root (jail.py), chosen by what the interpreter needs, nothing else.

Not /usr as a whole: /usr/local/share is where nbgrader's shared exchange lives by default
(every student's submission in its inbound/), /usr/local/etc and /usr/share/jupyter are where a
site keeps Jupyter's configuration. A child sees

- programs and shared libraries: /usr/bin, /usr/sbin, /usr/lib*, and /bin, /sbin, /lib* (links
  into /usr on a merged system), and the folders ld.so searches (/etc/ld.so.conf, LD_LIBRARY_PATH);
- what the interpreter's libraries read lazily: time zones, fonts, fontconfig's rules, a few /etc
  files (ETC_FILES), matplotlib's data;
- the interpreter: its prefix whole where it is the interpreter's own (a venv, a pyenv or conda
  env, a build under /opt); of a prefix it shares with the system (/usr, /usr/local) only its
  standard library, site-packages, libpython's folder and its executable's folder;
- every sys.path folder in a prefix or outside the kit, and the folder of every file the zygote
  has mapped (the shared libraries it loaded) or imported a module from.

Never a folder that holds a place no child may see (NEVER_ABOVE: the homes, /srv, the shared
data folders above), whatever the interpreter's paths say: a sys.path entry that is a home
folder is left out, and its modules cannot be imported (the preflight says so). The kit's own
folders inside a bound folder are covered by an empty tmpfs ("mask").

Loaded inside the zygote from its file path: standard library only.
"""

from __future__ import annotations

import glob
import os
import sys
import sysconfig

SYSTEM_DIRS = ("/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libx32",
               "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_DATA = ("/usr/share/zoneinfo", "/usr/share/fonts", "/usr/share/fontconfig", "/usr/local/share/fonts")
ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/passwd",
             "/etc/group", "/etc/nsswitch.conf", "/etc/fonts", "/etc/alternatives")
SHARED_PREFIXES = ("/", "/usr", "/usr/local")
NEVER_ABOVE = ("/usr/local/share", "/usr/share", "/usr/local/etc", "/etc", "/srv", "/home", "/root", "/var", "/mnt",
               "/media")
KIT_FOLDERS = ("autograder", "reference", "solutions", "exercises", "tests", "docs", "demo", "benchmarks", ".git")
LD_SO_CONF = "/etc/ld.so.conf"


def inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def plan(kit_root: str) -> list[tuple[str, str]]:
    """(path, kind) pairs: kind is "dir", "file", "link:<target>", or "mask" -- an empty
    read-only tmpfs over a folder of the kit that lies inside a bound folder (a kit installed
    into site-packages: its reference must not be readable by path)."""
    made = []
    for path in SYSTEM_DIRS + SYSTEM_DATA + ETC_FILES:
        if os.path.islink(path) and path in SYSTEM_DIRS:
            made.append((path, "link:" + os.readlink(path)))
        elif os.path.isdir(path):
            made.append((path, "dir"))
        elif os.path.isfile(path):
            made.append((path, "file"))
    bound = [os.path.realpath(p) for p, kind in made if kind == "dir"]
    for path in interpreter_paths(kit_root):
        if not any(inside(path, b) for b in bound):
            made.append((path, "dir"))
            bound.append(path)
    kit = os.path.realpath(kit_root)
    for name in KIT_FOLDERS:
        folder = os.path.join(kit, name)
        if os.path.isdir(folder) and any(inside(folder, b) for b in bound):
            made.append((folder, "mask"))
    return made


def interpreter_paths(kit_root: str) -> list[str]:
    """The folders the interpreter needs beyond the system's, outermost only (see the docstring)."""
    kit = os.path.realpath(kit_root)
    secrets = _secrets()
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    own = {p for p in prefixes if p not in SHARED_PREFIXES and not _above(p, secrets)}
    scheme = sysconfig.get_paths()
    named = {*own, *(scheme.get(key, "") for key in ("stdlib", "platstdlib", "purelib", "platlib")),
             sysconfig.get_config_var("LIBDIR") or "", *sys.path, *library_folders(),
             *(os.path.dirname(p) for p in (os.path.abspath(sys.executable), os.path.realpath(sys.executable)))}
    # Hundreds of folders of loaded files, nearly all inside a prefix or a system folder already in
    # view: those are left out before each path is resolved, which costs a system call per part.
    in_view = [*own, *(os.path.realpath(d) for d in SYSTEM_DIRS if os.path.isdir(d))]
    loaded = {f for f in loaded_folders() if not any(inside(os.path.normpath(f), v) for v in in_view)}
    paths = set()
    for path in named | loaded:
        real = os.path.realpath(path) if path else ""
        if not real or not os.path.isdir(real) or _above(real, secrets):
            continue
        if any(inside(real, p) for p in own) or not inside(real, kit):
            paths.add(real)
    return sorted(p for p in paths if not any(q != p and inside(p, q) for q in paths))


def _secrets() -> tuple[str, ...]:
    """Places no child may see: NEVER_ABOVE and the grader's own home."""
    homes = {os.path.realpath(os.path.expanduser("~"))}
    try:
        import pwd

        homes.add(os.path.realpath(pwd.getpwuid(os.getuid()).pw_dir))
    except (ImportError, KeyError):
        pass
    return tuple(p for p in (*NEVER_ABOVE, *homes) if p not in ("", "/"))


def _above(path: str, secrets: tuple[str, ...]) -> bool:
    """Whether binding `path` would show one of `secrets` (a home, a shared exchange's folder)."""
    return any(inside(secret, path) for secret in secrets)


def library_folders() -> list[str]:
    """Where ld.so looks for a library the interpreter loads later: /etc/ld.so.conf's folders (with
    its includes) and LD_LIBRARY_PATH's."""
    found = [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if os.path.isabs(p)]
    seen: set[str] = set()

    def read(conf: str, depth: int = 0) -> None:
        if depth > 4 or conf in seen:
            return
        seen.add(conf)
        try:
            with open(conf, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            return
        for line in lines:
            line = line.split("#", 1)[0].strip()
            if line.startswith("include "):
                pattern = line.split(None, 1)[1]
                pattern = pattern if os.path.isabs(pattern) else os.path.join(os.path.dirname(conf), pattern)
                for included in sorted(glob.glob(pattern)):
                    read(included, depth + 1)
            elif os.path.isabs(line):
                found.append(line)

    read(LD_SO_CONF)
    return found


def loaded_folders() -> list[str]:
    """The folders of the files this process has mapped (its shared libraries) and of the modules
    it has imported: what it has loaded, its children may load again."""
    folders = set()
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            for line in f:
                fields = line.rstrip("\n").split(None, 5)
                if len(fields) == 6 and fields[5][:1] == "/" and not fields[5].endswith("(deleted)"):
                    folders.add(fields[5].rpartition("/")[0])
    except OSError:
        pass
    for module in list(sys.modules.values()):
        # from its namespace: getattr would run a lazy module's __getattr__ (torch has several)
        path = getattr(module, "__dict__", {}).get("__file__")
        if isinstance(path, str) and path[:1] == "/":
            folders.add(path.rpartition("/")[0])
    matplotlib = sys.modules.get("matplotlib")
    if matplotlib is not None:
        try:
            folders.add(matplotlib.get_data_path())    # Debian's python3-matplotlib: /usr/share/matplotlib
        except Exception:  # noqa: BLE001 - a matplotlib without it draws without its data
            pass
    return sorted(f for f in folders if f and not f.startswith(("/dev/", "/proc/", "/sys/", "/memfd:")))
