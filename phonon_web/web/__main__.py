"""`python -m phonon_web.web fetch | build OUT_DIR | serve OUT_DIR` (see phonon_web/web/__init__.py)."""

import sys

USAGE = """usage: python -m phonon_web.web COMMAND ...

  fetch [--dest DIR]                       npm pack the pinned pyodide into build/vendor/ (once)
  build OUT_DIR [--weights DIR] [--pyodide TGZ|DIR] [--wheel WHL]
                                           assemble the static site
  serve DIR [--port N]                     serve it on 127.0.0.1 (cross-origin isolated)
"""


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "fetch":
        from .build import fetch_main

        return fetch_main(rest)
    if command == "build":
        from .build import main as build_main

        return build_main(rest)
    if command == "serve":
        from .serve import main as serve_main

        return serve_main(rest)
    print(f"unknown command {command!r}\n\n{USAGE}", file=sys.stderr)
    return 2


sys.exit(main())
