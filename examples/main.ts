/**
 * Example: a CI stack that picks the cheapest in-stock, on-demand H100 flavor in a region (any
 * H100 variant: `gpu: "H100"` matches H100-80G-PCIe, H100-80G-SXM5, H100-94G-NVL, ...), a
 * fallback flavor for when that region has none, and creates (or adopts) the API token the CI
 * pipeline uses.
 *
 *   GPUCLOUD_BASE_URL=... GPUCLOUD_USERNAME=... GPUCLOUD_PASSWORD=... npx --yes cdktf-cli@0.21 deploy
 *
 * With CDK Terrain: import from "cdktn" and "cdktf-gpucloud/cdktn", and run npx --yes cdktn-cli@0.24 deploy.
 *
 * Credentials are read by the scripts that Terraform runs, from terraform's environment; they
 * are never part of this program or of the synthesized cdk.tf.json.
 */
import { App, LocalBackend, TerraformOutput, TerraformStack } from "cdktf";
import { ApiToken, FlavorPreference, Flavors } from "cdktf-gpucloud";
import type { Construct } from "constructs";

export interface GpuCiStackProps {
  /** Region to run GPU jobs in. */
  readonly regionId: string;
  /** Name of the API token the pipeline uses. */
  readonly tokenName: string;
  readonly tokenDescription?: string;
}

export class GpuCiStack extends TerraformStack {
  constructor(scope: Construct, id: string, props: GpuCiStackProps) {
    super(scope, id);
    // cdktf's default local backend is an absolute path where `cdktf synth` ran. A path relative
    // to the stack folder keeps the folder self-contained. A pipeline whose jobs run on different
    // machines needs a remote backend (S3Backend, GcsBackend, CloudBackend, ...) that every job
    // reaches; the state holds the token's value.
    new LocalBackend(this, { path: "terraform.tfstate" });

    const h100 = new Flavors(this, "h100", {
      regionId: props.regionId,
      gpu: "H100",
      gpuCount: 1,
      inStockOnly: true,
      spot: false,
    });

    // Ordered preference: an H100 in the pipeline's region, else an 80 GB H100 anywhere, else
    // two A100-80G or L40S. The first choice with a match wins, the cheapest within it.
    const fallback = new FlavorPreference(this, "gpu-choice", {
      choices: [
        { regionId: props.regionId, gpu: "H100", gpuCount: 1, inStockOnly: true, spot: false },
        { gpu: "H100-80G", gpuCount: 1, inStockOnly: true, spot: false },
        { gpus: ["A100-80G", "L40S"], gpuCount: 2, spot: false },
      ],
    });

    const token = new ApiToken(this, "ci-token", {
      name: props.tokenName,
      description: props.tokenDescription,
    });

    new TerraformOutput(this, "flavor_id", { value: h100.cheapestId });
    new TerraformOutput(this, "flavor_name", { value: h100.cheapestName });
    new TerraformOutput(this, "flavor_price", { value: h100.cheapestPrice });
    new TerraformOutput(this, "flavor_matches", { value: h100.count });
    new TerraformOutput(this, "preferred_flavor_id", { value: fallback.flavorId });
    new TerraformOutput(this, "preferred_choice", { value: fallback.choice });
    new TerraformOutput(this, "token_id", { value: token.tokenId });
    new TerraformOutput(this, "token_created_at", { value: token.createdAt });
    // Terraform refuses to print a sensitive value in an output that is not marked sensitive.
    new TerraformOutput(this, "token", { value: token.token, sensitive: true });
  }
}

if (require.main === module) {
  const app = new App();
  new GpuCiStack(app, "gpu-ci", {
    regionId: process.env.EXAMPLE_REGION_ID ?? "norway-east-1",
    tokenName: process.env.EXAMPLE_TOKEN_NAME ?? "ci-pipeline",
    tokenDescription: process.env.EXAMPLE_TOKEN_DESCRIPTION ?? "Launches GPU jobs from CI",
  });
  app.synth();
}
