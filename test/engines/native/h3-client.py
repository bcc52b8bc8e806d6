"""An HTTP/3 client on aioquic (pip install aioquic) for the native engine's HTTP/3 tests
(http3.test.ts): one QUIC connection to 127.0.0.1:PORT, requests sent in phases (a phase's
requests all at once, the next phase once they are answered), each answer printed as one JSON
list on stdout. A request may reset its stream ("reset": the client cancels it once the answer's
head has come, H3_REQUEST_CANCELLED); its result is then {"reset": true}. A request may "stall": its head
announces its body's length, and only half of the body is sent.

    python3 h3-client.py PORT '[[{"method": "GET", "path": "/"}], [...]]' [wait-close]

With "wait-close" the client then waits for the server to close the connection, and prints,
after the answers, the closing's error code and whether a GOAWAY frame came first.
"""

import asyncio
import json
import ssl
import sys

from aioquic.asyncio.client import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import ConnectionTerminated, StreamDataReceived, StreamReset

H3_REQUEST_CANCELLED = 0x10C
GOAWAY = 0x7
# The server's control stream: its first unidirectional stream (RFC 9000 §2.1, RFC 9114 §6.2.1).
SERVER_CONTROL_STREAM = 3


def varint(data, at):
    """A QUIC variable-length integer at `at` (RFC 9000 §16): (value, next), or None if cut short."""
    if at >= len(data):
        return None
    size = 1 << (data[at] >> 6)
    if at + size > len(data):
        return None
    value = data[at] & 0x3F
    for b in data[at + 1 : at + size]:
        value = (value << 8) | b
    return value, at + size


def frame_types(control):
    """The frame types on the server's control stream so far (after its stream type)."""
    types, at = [], 0
    head = varint(control, at)
    if head is None:
        return types
    at = head[1]
    while True:
        kind = varint(control, at)
        length = kind and varint(control, kind[1])
        if not length or length[1] + length[0] > len(control):
            return types
        types.append(kind[0])
        at = length[1] + length[0]


class Client(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.http = H3Connection(self._quic)
        self.waiters = {}
        self.heads = {}
        self.answers = {}
        self.control = b""
        self.closed_with = None

    def quic_event_received(self, event):
        if isinstance(event, ConnectionTerminated):
            self.closed_with = event.error_code
        if isinstance(event, StreamDataReceived) and event.stream_id == SERVER_CONTROL_STREAM:
            # aioquic reads GOAWAY without reporting it: the control stream is read here too.
            self.control += event.data
        if isinstance(event, StreamReset) and event.stream_id in self.waiters:
            self.waiters.pop(event.stream_id).set_result({"serverReset": event.error_code})
        for ev in self.http.handle_event(event):
            if isinstance(ev, (HeadersReceived, DataReceived)):
                answer = self.answers.setdefault(ev.stream_id, {"headers": [], "body": b""})
                if isinstance(ev, HeadersReceived):
                    answer["headers"] += ev.headers
                    if ev.stream_id in self.heads:
                        self.heads.pop(ev.stream_id).set_result(True)
                else:
                    answer["body"] += ev.data
                if ev.stream_ended and ev.stream_id in self.waiters:
                    self.waiters.pop(ev.stream_id).set_result(answer)

    async def request(self, spec):
        stream = self._quic.get_next_available_stream_id()
        body = spec.get("body", "")
        body = b"x" * body["size"] if isinstance(body, dict) else body.encode()
        headers = [(b":method", spec["method"].encode()), (b":scheme", b"https"), (b":authority", b"localhost"), (b":path", spec["path"].encode())]
        headers += [(k.encode(), v.encode()) for k, v in spec.get("headers", [])]
        if body:
            headers.append((b"content-length", str(len(body)).encode()))
        if spec.get("stall", False):
            body = body[: len(body) // 2]
        reset = spec.get("reset", False)
        self.http.send_headers(stream, headers, end_stream=not body and not reset)
        if reset:
            if body:
                self.http.send_data(stream, body, end_stream=False)
            head = asyncio.get_running_loop().create_future()
            self.heads[stream] = head
            self.transmit()
            # Once the app has the request (its answer's head came), the stream is cancelled both ways.
            await asyncio.wait_for(head, 240)
            self._quic.reset_stream(stream, H3_REQUEST_CANCELLED)
            self._quic.stop_stream(stream, H3_REQUEST_CANCELLED)
            self.transmit()
            return {"reset": True}
        if body:
            self.http.send_data(stream, body, end_stream=not spec.get("stall", False))
        waiter = asyncio.get_running_loop().create_future()
        self.waiters[stream] = waiter
        self.transmit()
        answer = await asyncio.wait_for(waiter, 240)
        if "serverReset" in answer:
            return answer
        raw = answer["body"]
        result = {
            "status": int(dict(answer["headers"]).get(b":status", b"0")),
            "headers": {k.decode(): v.decode() for k, v in answer["headers"] if not k.startswith(b":")},
            "length": len(raw),
            "allX": raw == b"x" * len(raw),
        }
        if len(raw) <= 4096:
            result["body"] = raw.decode("utf-8", "replace")
        return result


async def main(port, phases, wait_close):
    config = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN)
    config.verify_mode = ssl.CERT_NONE
    results = []
    async with connect("127.0.0.1", port, configuration=config, create_protocol=Client) as client:
        for phase in phases:
            results.append(await asyncio.gather(*(client.request(spec) for spec in phase)))
        if wait_close:
            await asyncio.wait_for(client.wait_closed(), 240)
            results.append({"closedWith": client.closed_with, "goaway": GOAWAY in frame_types(client.control)})
        else:
            client.close()
            await client.wait_closed()
    print(json.dumps(results))


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3:] == ["wait-close"]))
