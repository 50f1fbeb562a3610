/**
 * roslib with its types. roslib 2.x ships ESM and its own .d.ts, but its package.json has no
 * "types" export condition, so under NodeNext `import { Ros } from "roslib"` type-checks as an empty
 * module. This file is the one place that bridges that: the runtime module, typed by its own
 * declaration files. NOTE: if tsconfig gains `"paths": {"roslib": ["./node_modules/roslib/dist/src/RosLib.d.ts"]}`
 * this keeps working unchanged.
 */
import type * as RosLibTypes from "../../../node_modules/roslib/dist/src/RosLib.d.ts";
import * as untypedRoslib from "roslib";

export const roslib = untypedRoslib as unknown as typeof RosLibTypes;

export type Ros = RosLibTypes.Ros;
export type Topic<T> = RosLibTypes.Topic<T>;
export type Service<TRequest, TResponse> = RosLibTypes.Service<TRequest, TResponse>;
export type ITransport = RosLibTypes.ITransport;
export type ITransportFactory = RosLibTypes.ITransportFactory;
export type RosbridgeMessage = RosLibTypes.RosbridgeMessage;
