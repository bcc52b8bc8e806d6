"""An HTTP/3 client on aioquic for cog-http3's interop test: GETs and a POST against the
example server on 127.0.0.1, over one connection, checking each answer. Exits non-zero on a
failure; prints one line per request and a closing 'N passed, N failed' line."""

import asyncio
import ssl
import sys

from aioquic.asyncio.client import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration


class Client(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.http = H3Connection(self._quic)
        self.waiters = {}
        self.answers = {}

    def quic_event_received(self, event):
        for ev in self.http.handle_event(event):
            if isinstance(ev, (HeadersReceived, DataReceived)):
                answer = self.answers.setdefault(ev.stream_id, {"headers": [], "body": b""})
                if isinstance(ev, HeadersReceived):
                    answer["headers"] += ev.headers
                else:
                    answer["body"] += ev.data
                if ev.stream_ended and ev.stream_id in self.waiters:
                    self.waiters.pop(ev.stream_id).set_result(answer)

    async def request(self, method, path, body=b""):
        stream = self._quic.get_next_available_stream_id()
        headers = [(b":method", method), (b":scheme", b"https"), (b":authority", b"localhost"), (b":path", path)]
        if body:
            headers.append((b"content-length", str(len(body)).encode()))
        self.http.send_headers(stream, headers, end_stream=not body)
        if body:
            self.http.send_data(stream, body, end_stream=True)
        waiter = asyncio.get_running_loop().create_future()
        self.waiters[stream] = waiter
        self.transmit()
        return await asyncio.wait_for(waiter, 10)


async def main(port):
    config = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN)
    config.verify_mode = ssl.CERT_NONE
    passed = failed = 0
    async with connect("127.0.0.1", port, configuration=config, create_protocol=Client) as client:
        cases = [(b"GET", b"/", b""), (b"GET", b"/hello?x=1", b""), (b"POST", b"/echo", b"x" * 100_000)]
        cases += [(b"GET", b"/many/%d" % i, b"") for i in range(20)]
        results = await asyncio.gather(*(client.request(m, p, b) for m, p, b in cases))
        for (method, path, body), answer in zip(cases, results):
            headers = dict(answer["headers"])
            expect = b"hello from cog-http3: " + method + b" " + path + b"\n" + body
            ok = headers.get(b":status") == b"200" and answer["body"] == expect
            ok = ok and headers.get(b"content-length") == str(len(expect)).encode()
            print(("ok  " if ok else "FAIL"), method.decode(), path.decode(), len(answer["body"]), "bytes")
            passed, failed = passed + ok, failed + (not ok)
        client.close()
    print(f"{passed} passed, {failed} failed")
    return failed == 0


if __name__ == "__main__":
    sys.exit(0 if asyncio.run(main(int(sys.argv[1]))) else 1)
