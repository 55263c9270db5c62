# Accepts and closes connections on 10.0.1.1..16:8080, the endpoints of the first-packet tables.
import socket, selectors
sel = selectors.DefaultSelector()
for k in range(16):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("10.0.1.%d" % (k+1), 8080)); s.listen(1024); s.setblocking(False)
    sel.register(s, selectors.EVENT_READ)
print("ready", flush=True)
while True:
    for key, _ in sel.select():
        try:
            c, _ = key.fileobj.accept(); c.close()
        except BlockingIOError: pass
