// The Socket.IO peer of scenario 5 (bench/run.sh --peers): every socket joins
// one room, and `POST /publish` broadcasts its JSON body to the room as one
// `chat.message` event. WebSocket transport only, so the sockets compare with
// the service's WebSockets and not with HTTP long-polling.
//
//   node server.js --port 4000
"use strict";

const http = require("node:http");
const { Server } = require("socket.io");

const ROOM = "bench";
const portFlag = process.argv.indexOf("--port");
const port = portFlag >= 0 ? Number(process.argv[portFlag + 1]) : 4000;

const httpServer = http.createServer((req, res) => {
  if (req.method === "GET" && req.url === "/healthz") {
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("ok");
    return;
  }
  if (req.method === "POST" && req.url === "/publish") {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      let data;
      try {
        data = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch (e) {
        res.writeHead(400, { "content-type": "text/plain" });
        res.end("not JSON");
        return;
      }
      io.to(ROOM).emit("chat.message", data);
      res.writeHead(200, { "content-type": "text/plain" });
      res.end(String(io.sockets.adapter.rooms.get(ROOM)?.size ?? 0));
    });
    return;
  }
  // Everything else under /socket.io/ is Socket.IO's; the rest is unknown.
  if (!req.url.startsWith("/socket.io/")) {
    res.writeHead(404);
    res.end();
  }
});

const io = new Server(httpServer, {
  transports: ["websocket"],
  serveClient: false,
});
io.on("connection", (socket) => socket.join(ROOM));

httpServer.listen(port, "127.0.0.1", () => {
  console.log(`socket.io peer on 127.0.0.1:${port}`);
});
