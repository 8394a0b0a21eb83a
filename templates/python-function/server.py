"""minik8s function runtime: a stdlib HTTP server that calls handler(event, context) for every request.

Protocol (shared with the activator, src/roles/activator/):
  GET /healthz            200 once the handler module is imported; 500 with the import error otherwise.
  anything else           calls the handler: event is the parsed JSON body (raw text if it is not JSON,
                          None when empty); context carries method, path, query, headers, invocation_id,
                          function and version. The return value is answered as JSON (200); an exception
                          is a 500 {"error": "Type: message", "traceback": "..."} and the server carries on.
  A request carrying x-minik8s-invocation-id is always an invocation, even on /healthz, so a function's
  own sub-path of that name still reaches it through the activator.
  What the handler prints during the call is captured (bounded) and returned base64 in the response
  headers x-minik8s-stdout and x-minik8s-stderr, and still written to the container's own output.
  SIGTERM: stop accepting, let in-flight calls finish, exit.

Settings (environment): MINIK8S_PORT (8080), MINIK8S_FUNCTION_DIR (/app/function), MINIK8S_DEPS_DIR
(/app/deps), MINIK8S_HANDLER (handler.handler: module.function), MINIK8S_FUNCTION_NAME,
MINIK8S_FUNCTION_VERSION. Only the standard library is used, so the runtime starts in tens of ms.
"""

import base64
import faulthandler
import importlib
import json
import os
import signal
import sys
import threading
import time
import traceback
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

CAPTURE_LIMIT = 4096
MAX_BODY = 6 * 1024 * 1024

PORT = int(os.environ.get("MINIK8S_PORT", "8080"))
FUNCTION_DIR = os.environ.get("MINIK8S_FUNCTION_DIR", "/app/function")
DEPS_DIR = os.environ.get("MINIK8S_DEPS_DIR", "/app/deps")
HANDLER = os.environ.get("MINIK8S_HANDLER", "") or "handler.handler"
FUNCTION_NAME = os.environ.get("MINIK8S_FUNCTION_NAME", "")
FUNCTION_VERSION = os.environ.get("MINIK8S_FUNCTION_VERSION", "")
# Where Kubernetes reads a container's termination message (terminationMessagePath's default).
TERMINATION_LOG = os.environ.get("MINIK8S_TERMINATION_LOG", "/dev/termination-log")
TERMINATION_MESSAGE_LIMIT = 4096


class Context(dict):
    """The handler's context: a dict whose keys also read as attributes (context.query or context["query"])."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class _Capture(threading.local):
    buffer = None


_capture = {"stdout": _Capture(), "stderr": _Capture()}


class _TeeStream:
    """Writes through to the real stream and, while a call runs on this thread, into its bounded buffer."""

    def __init__(self, real, capture):
        self._real = real
        self._capture = capture

    def write(self, text):
        buf = self._capture.buffer
        if buf is not None and buf["size"] < CAPTURE_LIMIT:
            data = text.encode("utf-8", "replace")[: CAPTURE_LIMIT - buf["size"]]
            buf["parts"].append(data)
            buf["size"] += len(data)
        return self._real.write(text)

    def flush(self):
        return self._real.flush()

    def __getattr__(self, name):
        return getattr(self._real, name)


def _load_handler():
    """Imports module.function; returns (function, None) or (None, error dict) so /healthz can say why."""
    for path in (DEPS_DIR, FUNCTION_DIR):
        if os.path.isdir(path) and path not in sys.path:
            sys.path.insert(0, path)
    module_name, _, func_name = HANDLER.rpartition(".")
    if not module_name or not func_name:
        return None, {"error": "handler %r must be module.function, e.g. handler.handler" % HANDLER}
    try:
        module = importlib.import_module(module_name)
    except BaseException as exc:  # a SyntaxError or a failing top-level statement must not kill the server
        return None, {
            "error": "cannot import handler module %r from %s: %s: %s" % (module_name, FUNCTION_DIR, type(exc).__name__, exc),
            "traceback": traceback.format_exc(),
        }
    func = getattr(module, func_name, None)
    if not callable(func):
        return None, {"error": "module %r has no function %r (MINIK8S_HANDLER=%s)" % (module_name, func_name, HANDLER)}
    return func, None


def _write_termination_message(load_error):
    """The import error, as the container's termination message: whoever reads the pod's status learns why it never served, without its logs."""
    text = load_error["error"] + "\n" + load_error.get("traceback", "")
    data = text.encode("utf-8", "replace")
    if len(data) > TERMINATION_MESSAGE_LIMIT:  # Kubernetes keeps at most 4096 bytes: the end says most
        data = data[-TERMINATION_MESSAGE_LIMIT:]
    # Only into a file the kubelet made (it mounts one there): never create files in /dev of a machine the runtime runs on directly.
    if not os.path.isfile(TERMINATION_LOG):
        return
    try:
        with open(TERMINATION_LOG, "wb") as f:
            f.write(data)
    except OSError:
        pass  # read-only: the log and /healthz still say it


class _State:
    handler = None
    load_error = None
    draining = False
    in_flight = 0
    lock = threading.Condition()


def _b64(buf):
    return base64.b64encode(b"".join(buf["parts"])).decode("ascii") if buf["size"] else ""


class FunctionRequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the activator reuses connections
    server_version = "minik8s-python/1"
    # Headers and body go out in one write (below) and small answers must not wait for Nagle.
    disable_nagle_algorithm = True

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass  # one line per request would drown the function's own output in `function logs`

    def _send(self, status, body, extra=None):
        self.send_response_only(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if _State.draining:
            self.send_header("Connection", "close")
            self.close_connection = True
        for name, value in (extra or {}).items():
            if value:
                self.send_header(name, value)
        self._headers_buffer.append(b"\r\n")
        self.wfile.write(b"".join(self._headers_buffer) + body)
        self._headers_buffer = []

    def _read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            raise ValueError("request body of %d bytes is larger than %d" % (length, MAX_BODY))
        return self.rfile.read(length) if length > 0 else b""

    def _health(self):
        if _State.load_error is not None:
            self._send(500, json.dumps(_State.load_error).encode())
        else:
            self._send(200, b'{"status":"ok"}')

    def _invoke(self):
        url = urlsplit(self.path)
        invocation_id = self.headers.get("x-minik8s-invocation-id") or uuid.uuid4().hex
        try:
            raw = self._read_body()
        except ValueError as exc:
            self._send(413, json.dumps({"error": str(exc)}).encode())
            return
        if _State.handler is None:
            self._send(500, json.dumps(_State.load_error).encode(), {"x-minik8s-invocation-id": invocation_id})
            return
        text = raw.decode("utf-8", "replace")
        if not text.strip():
            event = None
        else:
            try:
                event = json.loads(text)
            except ValueError:
                event = text
        query_all = parse_qs(url.query, keep_blank_values=True)
        context = Context(
            method=self.command,
            path=url.path or "/",
            query={k: v[0] for k, v in query_all.items()},
            query_all=query_all,
            headers={k.lower(): v for k, v in self.headers.items()},
            invocation_id=invocation_id,
            function=FUNCTION_NAME,
            version=FUNCTION_VERSION,
        )
        out = {"parts": [], "size": 0}
        err = {"parts": [], "size": 0}
        _capture["stdout"].buffer = out
        _capture["stderr"].buffer = err
        started = time.monotonic()
        try:
            result = _State.handler(event, context)
            body = json.dumps(result).encode()
            status = 200
        except BaseException as exc:  # SystemExit and KeyboardInterrupt from a handler end the call, not the server
            # The runtime's own frame is noise to the function's author: the traceback starts in their code.
            tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__.tb_next))
            sys.stderr.write(tb)
            body = json.dumps({"error": "%s: %s" % (type(exc).__name__, exc), "traceback": tb}).encode()
            status = 500
        finally:
            _capture["stdout"].buffer = None
            _capture["stderr"].buffer = None
        sys.stdout.flush()
        sys.stderr.flush()
        self._send(status, body, {
            "x-minik8s-invocation-id": invocation_id,
            "x-minik8s-duration-ms": "%.3f" % ((time.monotonic() - started) * 1000),
            "x-minik8s-stdout": _b64(out),
            "x-minik8s-stderr": _b64(err),
        })

    def _handle(self):
        with _State.lock:
            _State.in_flight += 1
        try:
            if urlsplit(self.path).path == "/healthz" and "x-minik8s-invocation-id" not in self.headers:
                self._health()
            else:
                self._invoke()
        finally:
            with _State.lock:
                _State.in_flight -= 1
                _State.lock.notify_all()

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _handle


class FunctionServer(ThreadingHTTPServer):
    daemon_threads = True  # idle keep-alive connections must not hold up exit: in-flight calls are counted instead
    allow_reuse_address = True
    request_queue_size = 128


def main():
    sys.stdout = _TeeStream(sys.stdout, _capture["stdout"])
    sys.stderr = _TeeStream(sys.stderr, _capture["stderr"])
    # A crash the import cannot catch (a C extension's segfault) still leaves a Python traceback in the log.
    faulthandler.enable()
    _State.handler, _State.load_error = _load_handler()
    if _State.load_error is not None:
        sys.stderr.write("minik8s function runtime: %s\n%s" % (_State.load_error["error"], _State.load_error.get("traceback", "")))
        _write_termination_message(_State.load_error)
    server = FunctionServer(("0.0.0.0", PORT), FunctionRequestHandler)

    def drain(signum, frame):
        # serve_forever runs on this (the main) thread: shutdown() must be called from another one.
        _State.draining = True
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, drain)
    signal.signal(signal.SIGINT, drain)
    sys.stdout.write("minik8s function runtime: %s (%s) listening on :%d\n" % (FUNCTION_NAME or "function", HANDLER, PORT))
    sys.stdout.flush()
    server.serve_forever(poll_interval=0.5)
    server.socket.close()
    with _State.lock:
        while _State.in_flight > 0:
            _State.lock.wait()
    sys.stdout.write("minik8s function runtime: drained, exiting\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
