// A CRI client as the kubelet is one: @grpc/grpc-js over the runtime's unix socket, messages
// of cri-api's runtime.v1 (cri-proto.ts) encoded with @bufbuild/protobuf. Requests are plain
// init objects with the fields' JSON names (camelCase), as create() takes them; responses are
// the decoded messages. cri-api ≥ 0.33 made KeyValue.value bytes: give Buffers there.
import * as grpc from '@grpc/grpc-js';
import { create, fromBinary, toBinary, type DescMessage, type MessageShape } from '@bufbuild/protobuf';
import { criRegistry } from './proto.ts';
import { sleep } from '../wait.ts';

// Message shapes are dynamic (from a descriptor set read at test time): fields by JSON name.
export type CriMessage = Record<string, any>;

/** runtime.v1 enum values the tests use (numbers as on the wire). */
export const ContainerState = { CREATED: 0, RUNNING: 1, EXITED: 2, UNKNOWN: 3 } as const;
export const NamespaceMode = { POD: 0, CONTAINER: 1, NODE: 2, TARGET: 3 } as const;

export class CriClient {
  readonly #client: grpc.Client;

  constructor(socket: string) {
    this.#client = new grpc.Client(`unix:${socket}`, grpc.credentials.createInsecure());
  }

  /** One unary call of runtime.v1.RuntimeService (or ImageService with `service`). */
  call(method: string, request: CriMessage, { timeoutMs = 120_000, service = 'RuntimeService' } = {}): Promise<CriMessage> {
    const svc = criRegistry().getService(`runtime.v1.${service}`);
    const m = svc?.methods.find((x) => x.name === method);
    if (!svc || !m) throw new Error(`cri-api: no method runtime.v1.${service}/${method}`);
    const req = create(m.input as DescMessage, request as never) as MessageShape<DescMessage>;
    const output = m.output as DescMessage;
    return new Promise((resolve, reject) => {
      this.#client.makeUnaryRequest(
        `/runtime.v1.${service}/${method}`,
        (msg: MessageShape<DescMessage>) => Buffer.from(toBinary(m.input as DescMessage, msg)),
        (buf: Buffer) => fromBinary(output, buf),
        req,
        { deadline: Date.now() + timeoutMs },
        (err, res) => (err ? reject(err) : resolve(res as CriMessage)),
      );
    });
  }

  /** Waits until Version answers (the CRI plugin is serving). */
  async waitReady(timeoutMs = 30_000): Promise<CriMessage> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      try {
        return await this.call('Version', {}, { timeoutMs: 2_000 });
      } catch (err) {
        if (Date.now() > end) throw err;
        await sleep(100);
      }
    }
  }

  close(): void {
    this.#client.close();
  }
}
