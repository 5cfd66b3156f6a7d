#!/usr/bin/env python3
"""Precompiles pch/ember_pch.hpp with exactly the flags of a reference program.

usage: make_pch.py COMPILE_COMMANDS REFERENCE_SOURCE HEADER OUTPUT DEPFILE

GCC uses a precompiled header only when the translation unit including it was
compiled with the same code-generation options and macros; otherwise it parses
the header as usual (and -Winvalid-pch says why). Meson's own cpp_pch builds one
precompiled header per target, which costs as much as it saves for programs of
one source file, so this script builds one for all of them: it takes the
reference program's command from meson's compile_commands.json (written at
configure time, so flags never drift from what the build uses) and turns it into
a header compile.
"""
import json
import os
import shlex
import subprocess
import sys


def main():
    db_path, reference, header, output, depfile = sys.argv[1:6]
    with open(db_path) as f:
        db = json.load(f)
    entries = [e for e in db if os.path.normpath(e['file']).endswith(os.path.normpath(reference))]
    if not entries:
        sys.exit(f'make_pch.py: {reference} is not in {db_path}')
    entry = entries[0]
    args = entry['arguments'] if 'arguments' in entry else shlex.split(entry['command'])
    out = []
    skip_next = False
    for i, a in enumerate(args):
        if skip_next:
            skip_next = False
            continue
        if a in ('-o', '-c', '-MQ', '-MF', '-MT', '-include'):
            skip_next = True   # the reference's object, source, dependency file, and this header
            continue
        if a in ('-MD', '-MMD'):
            continue
        out.append(a)
    out += ['-x', 'c++-header', os.path.abspath(header), '-o', os.path.abspath(output),
            '-MD', '-MF', os.path.abspath(depfile), '-MQ', os.path.abspath(output)]
    sys.exit(subprocess.call(out, cwd=entry['directory']))


if __name__ == '__main__':
    main()
