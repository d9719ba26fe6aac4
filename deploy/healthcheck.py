"""The container's HEALTHCHECK: GET /readyz on this container's own port, stdlib only.

On a public bind the bot accepts only its own host names (docs/production.md,
"Allowed hosts"), so the probe names the host of BOT_PUBLIC_URL, as a browser would.
Exit 0 when the bot answers 200 (the store answers too), 1 otherwise.

Readiness, not liveness: Docker and Compose only report the state (Compose's
``depends_on: service_healthy`` waits on it before the proxy starts), and
restart nothing on it. An orchestrator that replaces unhealthy containers
(Swarm) should ask ``/livez`` instead: pass it as the argument.
"""

from __future__ import annotations

import http.client
import os
import sys
from urllib.parse import urlsplit


def main() -> int:
    path = sys.argv[1] if len(sys.argv) > 1 else "/readyz"
    port = int(os.environ.get("PORT", "3978"))
    public = os.environ.get("BOT_PUBLIC_URL", "")
    host = urlsplit(public).netloc if public else f"127.0.0.1:{port}"
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=3)
    try:
        connection.request("GET", path, headers={"Host": host})
        status = connection.getresponse().status
    except OSError as error:
        print(f"{path}: {error}", file=sys.stderr)
        return 1
    finally:
        connection.close()
    return 0 if status == 200 else 1


if __name__ == "__main__":
    sys.exit(main())
