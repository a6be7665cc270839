// The floor for the NRI row: a process that speaks just enough of NRI's framing to be driven
// by the same test peer — it sends a prebuilt RegisterPlugin and answers every request with an
// empty ttRPC Response — with no protobuf decoding, no mapping and no handler. The plugin's own
// time per CreateContainer is its round trip minus this one.
import net from 'node:net';

const [socketPath, registerHex] = process.argv.slice(2);
const EMPTY_RESPONSE_LEN = 0;
const socket = net.createConnection(socketPath, () => socket.write(Buffer.from(registerHex, 'hex')));
let buf = Buffer.alloc(0);
socket.on('data', (chunk) => {
  buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
  const out = [];
  while (buf.length >= 8) {
    const conn = buf.readUInt32BE(0);
    const size = buf.readUInt32BE(4);
    if (buf.length < 8 + size) break;
    // conn 1 carries the runtime's requests; one ttRPC frame per mux frame, as the Go side writes.
    if (conn === 1 && buf[8 + 8] === 1) {
      const reply = Buffer.alloc(8 + 10 + EMPTY_RESPONSE_LEN);
      reply.writeUInt32BE(1, 0);
      reply.writeUInt32BE(10, 4);
      reply.writeUInt32BE(buf.readUInt32BE(8 + 4), 8 + 4);
      reply[8 + 8] = 2;
      out.push(reply);
    }
    buf = buf.subarray(8 + size);
  }
  if (out.length) socket.write(Buffer.concat(out));
});
socket.on('close', () => process.exit(0));
socket.on('error', () => process.exit(1));
