# A minik8s function: the runtime calls handler(event, context) for every request.
# event: the request body parsed as JSON (or the raw text, or None when empty).
# context: method, path, query, headers, invocation_id, function, version.
import os


def handler(event, context):
    name = (event or {}).get("name") if isinstance(event, dict) else None
    name = name or context.query.get("name") or "world"
    print(f"greeting {name}")  # shows in `minik8s function logs hello` and the invocation record
    return {
        "message": f"{os.environ.get('GREETING', 'Hello')}, {name}!",
        "version": context.version,
        "invocation": context.invocation_id,
    }
