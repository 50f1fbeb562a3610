/**
 * roslib with its types. roslib 2.x ships ESM and its own .d.ts, but its package.json has no
 * "types" export condition, so under NodeNext `import { Ros } from "roslib"` type-checks as an empty
 * module. This file is the one place that bridges that: the runtime module, typed by its own
 * declaration files. NOTE: if tsconfig gains `"paths": {"roslib": ["./node_modules/roslib/dist/src/RosLib.d.ts"]}`
 * this keeps working unchanged.
 *
 * roslib is loaded on first use (`loadRoslib`), not with the agent: only a ROS cell needs it, and it
 * costs any other cell (and every simulated one) about 0.1 s of CPU at start.
 */
import type * as RosLibTypes from "../../../node_modules/roslib/dist/src/RosLib.d.ts";
import { loadPackage } from "../../../protocol/load-package.js";

export type RosLib = typeof RosLibTypes;

/** roslib's module; rejects with a plain message when it cannot be loaded. */
export async function loadRoslib(): Promise<RosLib> {
  return (await loadPackage(() => import("roslib"), "the ROS client library (roslib)")) as unknown as RosLib;
}

export type Ros = RosLibTypes.Ros;
export type Topic<T> = RosLibTypes.Topic<T>;
export type Service<TRequest, TResponse> = RosLibTypes.Service<TRequest, TResponse>;
export type ITransport = RosLibTypes.ITransport;
export type ITransportFactory = RosLibTypes.ITransportFactory;
export type RosbridgeMessage = RosLibTypes.RosbridgeMessage;
