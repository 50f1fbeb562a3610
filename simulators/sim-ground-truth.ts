/**
 * The simulated world's own judgement of an episode, for the simulated operator who labels success
 * (a task with operator.success): the world sees every object, so it follows the task's stages over the
 * episode's frames as a person watching would. Truth: every stage reached (a task without stages: its
 * instrument predicates held); progress: the share of stages reached, 0-100. It wraps the agent's
 * monitor compiler and keeps the latest episode's judgement, which the sim cell's control channel
 * serves as GET /ground-truth.
 */
import { compileTaskMonitor, splitPersonJudged, type TaskMonitor, type TaskPredicateSpec } from "../protocol/predicates/index.js";

export interface GroundTruth {
  success: boolean;
  /** 0-100. */
  progress: number;
}

export class GroundTruthRecorder {
  private last: GroundTruth | undefined;

  /** The latest finished episode's truth, or undefined before the first. */
  latest(): GroundTruth | undefined {
    return this.last;
  }

  /** A monitor compiler for the agent (CellAgentOptions.compileTaskMonitor) that records each episode's truth. */
  readonly compile = (task: TaskPredicateSpec): TaskMonitor => {
    const monitor = compileTaskMonitor(task);
    const { personJudged } = splitPersonJudged(task);
    return {
      update: (frame) => monitor.update(frame),
      status: () => {
        const status = monitor.status();
        const stages = Object.values(status.stages);
        const reached = stages.filter((s) => s.reached).length;
        const held = Object.entries(status.predicates).filter(([name]) => !personJudged.includes(name));
        const success = stages.length > 0 ? reached === stages.length : held.length > 0 && held.every(([, p]) => p.satisfied);
        this.last = { success, progress: stages.length > 0 ? Math.round((100 * reached) / stages.length) : success ? 100 : 0 };
        return status;
      },
    };
  };
}
