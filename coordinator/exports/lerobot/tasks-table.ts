/**
 * `meta/tasks.parquet` as LeRobot writes it with pandas: a DataFrame whose index is the task
 * string (named "task") with one column `task_index`, stored by pyarrow as the columns
 * `task_index`, `task` plus the "pandas" schema metadata that names `task` as the index.
 * LeRobot's `load_tasks` (`pd.read_parquet`) needs that metadata to get the index back and look
 * tasks up by string (`tasks.loc[task]`).
 */
import { join } from "node:path";
import { TASKS_PATH } from "./lerobot-layout.js";
import { INT64, STRING, fileSchema, scalarColumn } from "./parquet-columns.js";
import { ParquetFile } from "./parquet-file.js";

/** Task strings in order of first use; a task's index is its position. */
export class TaskTable {
  private readonly indexByTask = new Map<string, number>();

  /** The task's index, registering it if new. */
  indexOf(task: string): number {
    let index = this.indexByTask.get(task);
    if (index === undefined) {
      index = this.indexByTask.size;
      this.indexByTask.set(task, index);
    }
    return index;
  }

  get size(): number {
    return this.indexByTask.size;
  }

  get tasks(): string[] {
    return [...this.indexByTask.keys()];
  }
}

/** pyarrow's pandas metadata for `DataFrame({"task_index": ...}, index=Index(tasks, name="task"))`. */
function pandasMetadata(): string {
  return JSON.stringify({
    index_columns: ["task"],
    column_indexes: [{ name: null, field_name: null, pandas_type: "unicode", numpy_type: "object", metadata: { encoding: "UTF-8" } }],
    columns: [
      { name: "task_index", field_name: "task_index", pandas_type: "int64", numpy_type: "int64", metadata: null },
      { name: "task", field_name: "task", pandas_type: "unicode", numpy_type: "object", metadata: null },
    ],
    creator: { library: "assay-lerobot-export", version: "1" },
  });
}

/** Writes `meta/tasks.parquet` under `root`; returns its relative path. */
export async function writeTasksTable(root: string, table: TaskTable): Promise<string> {
  const schema = fileSchema([scalarColumn("task_index", INT64), scalarColumn("task", STRING)]);
  const file = new ParquetFile(join(root, TASKS_PATH), schema, [{ key: "pandas", value: pandasMetadata() }]);
  const tasks = table.tasks;
  await file.writeRowGroup(
    [
      { name: "task_index", data: BigInt64Array.from(tasks, (_, i) => BigInt(i)) },
      { name: "task", data: tasks },
    ],
    tasks.length,
  );
  await file.finish();
  return TASKS_PATH;
}
