import { ApiClient, type GpuCloudClientOptions } from "./client";
import { openUndiciSender } from "./undici-sender";

/** A client of the GPU cloud API, over undici. Create one per configuration; `close()` it when done. */
export class GpuCloudClient extends ApiClient {
  constructor(options: GpuCloudClientOptions) {
    super(options, openUndiciSender);
  }
}
