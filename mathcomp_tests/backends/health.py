"""The short-lived HTTP client of a health check, built on the process's one TLS context.

A check runs every half second per server while a request is long in flight (liveness.py). An
``httpx.AsyncClient`` built with default settings loads the CA bundle into a TLS context of its own, about
90 ms of CPU each time, even for plain http: a cost taken from the model server it watches on a small
machine. The context is built once, with the settings httpx itself reads (SSL_CERT_FILE, SSL_CERT_DIR).
"""

from __future__ import annotations

import functools
import ssl
from typing import Any


@functools.cache
def tls_context() -> ssl.SSLContext:
    import httpx

    return httpx.create_ssl_context()


def client(timeout: float) -> Any:
    """A fresh ``httpx.AsyncClient`` (its own connections: the requests' pool may be full) with the shared
    TLS context."""
    import httpx

    return httpx.AsyncClient(timeout=timeout, verify=tls_context())
