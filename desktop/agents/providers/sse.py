"""Server-sent events over httpx, with provider errors mapped to stable codes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from desktop.agents.errors import (
    ModelNotFound,
    ProviderAuthError,
    ProviderBadResponse,
    ProviderHTTPError,
    ProviderStreamBroken,
    ProviderUnavailable,
)
from desktop.memory.privacy.boundary import redact_then_cut

#: The field names of the SSE format; any other line is not an event stream.
_SSE_FIELDS = frozenset({"event", "data", "id", "retry"})


class ProviderRateLimited(ProviderHTTPError):
    """The provider throttled the request (HTTP 429); ``retry_after`` in seconds when it said."""

    code = "provider_rate_limited"

    def __init__(self, message: str, *, retry_after: str | None = None, detail: str | None = None) -> None:
        super().__init__(message, status=429, detail=detail)
        self.retry_after = retry_after


def iter_sse(response: httpx.Response, junk: list[str] | None = None) -> Iterator[tuple[str, str]]:
    """Yield (event, data) pairs of an SSE body; ``event`` is "" when the server names none.

    Lines that are not SSE fields (an HTML error page, a JSON document) are skipped as
    the format says, and collected in ``junk`` when given so callers can tell garbage
    from a stream that merely ended early.
    """
    event: str = ""
    data: list[str] = []
    for line in response.iter_lines():
        if not line:
            if data:
                yield event, "\n".join(data)
            event, data = "", []
            continue
        if line.startswith(":"):
            continue  # a comment / keep-alive
        field, _, value = line.partition(":")
        if junk is not None and field not in _SSE_FIELDS and len(junk) < 20:
            junk.append(redact_then_cut(line, 200))
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            event = value
        elif field == "data":
            data.append(value)
    if data:
        yield event, "\n".join(data)


def parse_json(data: str, who: str) -> dict[str, Any]:
    """One SSE data payload as a JSON object, or ProviderBadResponse."""
    try:
        value = json.loads(data)
    except ValueError as exc:
        raise ProviderBadResponse(f"{who} streamed something that is not JSON.",
                                  detail=redact_then_cut(data, 200)) from exc
    if not isinstance(value, dict):
        raise ProviderBadResponse(f"{who} streamed a JSON value that is not an object.",
                                  detail=redact_then_cut(data, 200))
    return value


def raise_for_status(response: httpx.Response, who: str, model: str) -> None:
    """Map an HTTP failure status to the known error it means."""
    if response.status_code < 400:
        return
    try:
        body = redact_then_cut(response.read().decode("utf-8", "replace"), 500)
    except httpx.HTTPError:
        body = ""
    if response.status_code in (401, 403):
        raise ProviderAuthError(f"{who} refused the API key (HTTP {response.status_code}).", detail=body)
    if response.status_code == 429:
        wait = response.headers.get("retry-after")
        hint = f" Try again in {wait} s." if wait else " Try again later."
        raise ProviderRateLimited(f"{who} is rate limiting requests (HTTP 429).{hint}", retry_after=wait,
                                  detail=body)
    if response.status_code == 404:
        raise ModelNotFound(f"{who} has no model {model!r} (or the URL is wrong).", detail=body)
    raise ProviderHTTPError(f"{who} answered HTTP {response.status_code}.", status=response.status_code,
                            detail=body)


def is_json_body(response: httpx.Response) -> bool:
    """True when the server answered a JSON document instead of an event stream."""
    return response.headers.get("content-type", "").split(";")[0].strip().lower() == "application/json"


def not_a_stream(who: str, junk: list[str]) -> ProviderBadResponse:
    """The error of a 200 answer whose body is not an event stream."""
    return ProviderBadResponse(f"{who} answered something that is not an event stream.",
                               detail=redact_then_cut("\n".join(junk), 300))


def get_json(client: httpx.Client, url: str, headers: dict[str, str], who: str) -> dict[str, Any]:
    """GET ``url`` and return its JSON object; failures become known errors."""
    try:
        response = client.get(url, headers=headers)
    except httpx.ConnectError as exc:
        raise ProviderUnavailable(f"{who} is not reachable at {url}.", detail=str(exc)) from exc
    except httpx.TimeoutException as exc:
        raise ProviderUnavailable(f"{who} did not answer in time.", detail=str(exc)) from exc
    except httpx.HTTPError as exc:
        raise ProviderStreamBroken(f"{who} closed the connection.", detail=str(exc)) from exc
    raise_for_status(response, who, "")
    return parse_json(response.text, who)


@contextmanager
def streaming(client: httpx.Client, url: str, payload: dict[str, Any], headers: dict[str, str],
              who: str, model: str) -> Iterator[httpx.Response]:
    """POST ``payload`` and yield the streaming response; transport failures become known errors."""
    try:
        with client.stream("POST", url, json=payload, headers=headers) as response:
            raise_for_status(response, who, model)
            try:
                yield response
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.StreamError) as exc:
                raise ProviderStreamBroken(f"{who} closed the connection mid-answer.", detail=str(exc)) from exc
            except httpx.TimeoutException as exc:
                raise ProviderStreamBroken(f"{who} stopped answering mid-stream.", detail=str(exc)) from exc
    except httpx.ConnectError as exc:
        raise ProviderUnavailable(f"{who} is not reachable at {url}.", detail=str(exc)) from exc
    except httpx.TimeoutException as exc:
        raise ProviderUnavailable(f"{who} did not answer in time.", detail=str(exc)) from exc
    except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
        raise ProviderStreamBroken(f"{who} closed the connection.", detail=str(exc)) from exc
