"""A small application, its tests, a vendored copy, generated code and a secret: what
`bootstrap` must draw from and what it must leave out."""

from __future__ import annotations

from pathlib import Path

from tests.retrieval.corpora import write_corpus

SECRET = "AKIA" + "ABCDEFGHIJKLMNOP"  # an AWS access key id, which the redactor hides

APP = {
    "app/config.py": '"""Configuration loading for the demo application."""\nimport json\n\n\n'
    "def read_settings(path):\n"
    '    """Read the settings file from disk and parse it as JSON."""\n'
    "    with open(path) as fh:\n        return json.load(fh)\n\n\n"
    "def write_settings(path, data):\n"
    '    """Write the settings back to disk, replacing the old file."""\n'
    '    with open(path, "w") as fh:\n        json.dump(data, fh)\n',
    "app/server.py": "from app.config import read_settings\n\n\n"
    "class RequestHandler:\n"
    '    """Answer one HTTP request with a rendered page."""\n\n'
    "    def handle_get(self, request):\n"
    '        """Serve a GET request from the page cache when it is fresh."""\n'
    '        settings = read_settings("app.json")\n        return settings\n\n\n'
    "def start_server(port):\n"
    '    """Bind a socket on the given port and serve requests forever."""\n'
    "    handler = RequestHandler()\n    return handler.handle_get(port)\n",
    "app/storage.py": "def connect_storage():\n"
    f'    """Connect with key {SECRET} to the bucket store of the team."""\n'
    "    return None\n\n\n"
    "def close_storage_pool(pool):\n"
    "    # Close every pooled connection before the process exits.\n"
    "    pool.clear()\n",
    "web/router.js": "// Route an incoming path to the handler registered for it.\n"
    "function routeRequest(path, table) {\n  return table[path];\n}\n\n"
    "/** Register a handler for every path below a prefix. */\n"
    "function mountPrefix(table, prefix, handler) {\n  table[prefix] = handler;\n"
    "  return routeRequest(prefix, table);\n}\n",
    "tests/test_config.py": "def test_read_settings():\n"
    '    """Check that settings load from the fixture file on disk."""\n'
    "    assert True\n",
    "vendor/pad.py": "def pad_left_string(text, width):\n"
    '    """A vendored helper that pads strings on the left side."""\n'
    "    return text.rjust(width)\n",
    "api/models_pb2.py": "def generated_message_class():\n"
    '    """Generated message class for the protocol buffers."""\n'
    "    return None\n",
    "README.md": "# Demo application for serving requests\n\nRun it with python.\n",
}


def write_project(root: Path) -> Path:
    """The application's files below `root`; returns `root`."""
    return write_corpus(root, APP)
