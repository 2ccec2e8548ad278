import { hashMapper, listMapper, StringMap, stringToTerraform, TerraformDataSource, type TerraformMetaArguments } from "cdktf";
import type { Construct } from "constructs";

import { EXTERNAL_PROVIDER, metaArguments } from "../common";

/** Configuration of a `data "external"` source. */
export interface DataExternalConfig extends TerraformMetaArguments {
  /** The command to run: executable first, then its arguments. */
  readonly program: string[];
  /** Sent to the program as one JSON object on stdin. */
  readonly query?: { [key: string]: string };
  /** The program's working directory (default: Terraform's). */
  readonly workingDir?: string;
}

/** A `data "external"` source of the `hashicorp/external` provider. */
export class DataExternal extends TerraformDataSource {
  public static readonly tfResourceType = "external";

  private _program: string[];
  private _query?: { [key: string]: string };
  private _workingDir?: string;
  private readonly _result = new StringMap(this, "result");

  public constructor(scope: Construct, id: string, config: DataExternalConfig) {
    super(scope, id, {
      terraformResourceType: "external",
      terraformGeneratorMetadata: EXTERNAL_PROVIDER,
      ...metaArguments(config),
    });
    this._program = config.program;
    this._query = config.query;
    this._workingDir = config.workingDir;
  }

  public get id(): string {
    return this.getStringAttribute("id");
  }

  /** The program's output: a map of strings. */
  public get result(): StringMap {
    return this._result;
  }

  public get program(): string[] {
    return this.getListAttribute("program");
  }
  public set program(value: string[]) {
    this._program = value;
  }
  public get programInput(): string[] | undefined {
    return this._program;
  }

  public get query(): { [key: string]: string } {
    return this.getStringMapAttribute("query");
  }
  public set query(value: { [key: string]: string }) {
    this._query = value;
  }
  public get queryInput(): { [key: string]: string } | undefined {
    return this._query;
  }

  public get workingDir(): string {
    return this.getStringAttribute("working_dir");
  }
  public set workingDir(value: string) {
    this._workingDir = value;
  }
  public get workingDirInput(): string | undefined {
    return this._workingDir;
  }

  protected synthesizeAttributes(): { [name: string]: unknown } {
    return {
      program: listMapper(stringToTerraform, false)(this._program),
      query: hashMapper(stringToTerraform)(this._query),
      working_dir: stringToTerraform(this._workingDir),
    };
  }
}
