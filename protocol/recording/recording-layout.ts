/**
 * The episode recording's layout, the contract between the cell agent that writes an episode's MCAP
 * (cell-agent/recording/mcap-recorder.ts) and the coordinator's readers (artifacts, reports, exports):
 * its channels (topic, schema name, schema), the encodings, and the shapes of the JSON messages. Both
 * sides import it; nobody retypes a topic string.
 *
 * JSON messages with JSON schemas (schemaEncoding "jsonschema"), except the camera frames and `/tf`,
 * which are Foxglove's well-known schemas in protobuf (protocol/recording/foxglove-protobuf.ts).
 *
 * Recordings made before this layout (no `/tf`, no `/robot_description`, uncompressed chunks) carry
 * camera frames as JSON `foxglove.CompressedImage` with the JPEG in base64; the readers take both
 * (protocol/recording/recording-reader.ts).
 */
import { COMPRESSED_IMAGE, FOXGLOVE_DESCRIPTOR_SETS, FRAME_TRANSFORMS } from "./foxglove-protobuf.js";

/** A channel's message encoding: JSON text, or protobuf bytes (camera frames, `/tf`). */
export const MessageEncoding = { json: "json", protobuf: "protobuf" } as const;
export type MessageEncoding = (typeof MessageEncoding)[keyof typeof MessageEncoding];

/** A schema's encoding, paired with the message encoding above. */
export const SchemaEncoding = { jsonschema: "jsonschema", protobuf: "protobuf" } as const;

/** Camera channels are `/camera/<name>`, one per camera the cell recorded. */
export const CAMERA_TOPIC_PREFIX = "/camera/";

/** The topic of camera `name`'s frames. */
export function cameraTopic(name: string): string {
  return `${CAMERA_TOPIC_PREFIX}${name}`;
}

/** The camera name of a `/camera/<name>` topic, or null for any other topic. */
export function cameraNameOf(topic: string): string | null {
  return topic.startsWith(CAMERA_TOPIC_PREFIX) ? topic.slice(CAMERA_TOPIC_PREFIX.length) : null;
}

const numbers = { type: "array", items: { type: "number" } };
const strings = { type: "array", items: { type: "string" } };
const vector3 = { type: "object", properties: { x: { type: "number" }, y: { type: "number" }, z: { type: "number" } } };
const time = { type: "object", properties: { sec: { type: "integer" }, nsec: { type: "integer" } } };

export interface ChannelSpec {
  topic: string;
  schemaName: string;
  /** A JSON schema (JSON messages), or a FileDescriptorSet (protobuf messages). */
  schema: Record<string, unknown> | { protobuf: Uint8Array };
}

export const JOINT_STATES: ChannelSpec = {
  topic: "/joint_states_measured",
  schemaName: "assay.JointState",
  schema: {
    type: "object", title: "assay.JointState",
    properties: { timestamp: time, name: strings, position: numbers, velocity: numbers, effort: numbers, temperature_c: numbers },
  },
};

export const JOINT_TARGETS: ChannelSpec = {
  topic: "/joint_targets_commanded",
  schemaName: "assay.JointTargets",
  schema: { type: "object", title: "assay.JointTargets", properties: { timestamp: time, name: strings, position: numbers } },
};

/** Foxglove's well-known image schema in protobuf, so Foxglove Studio shows camera channels without setup (`/camera/<name>`). */
export const COMPRESSED_IMAGE_SCHEMA: Omit<ChannelSpec, "topic"> = {
  schemaName: COMPRESSED_IMAGE,
  schema: { protobuf: FOXGLOVE_DESCRIPTOR_SETS[COMPRESSED_IMAGE] },
};

/** Every link's transform from its parent at each control step, from the measured joints (robot-description.ts). */
export const TF: ChannelSpec = {
  topic: "/tf",
  schemaName: FRAME_TRANSFORMS,
  schema: { protobuf: FOXGLOVE_DESCRIPTOR_SETS[FRAME_TRANSFORMS] },
};

/** The robot's URDF, once, as ROS publishes it (std_msgs/String's one field, `data`). */
export const ROBOT_DESCRIPTION: ChannelSpec = {
  topic: "/robot_description",
  schemaName: "std_msgs/String",
  schema: { type: "object", title: "std_msgs/String", properties: { data: { type: "string", description: "URDF (XML)" } } },
};

export const FT_WRIST: ChannelSpec = {
  topic: "/ft_wrist",
  schemaName: "assay.Wrench",
  schema: { type: "object", title: "assay.Wrench", properties: { timestamp: time, force: vector3, torque: vector3 } },
};

export const OBJECT_POSES: ChannelSpec = {
  topic: "/gt/object_poses",
  schemaName: "assay.ObjectPoses",
  schema: {
    type: "object", title: "assay.ObjectPoses",
    properties: {
      timestamp: time,
      poses: {
        type: "object",
        additionalProperties: {
          type: "object",
          properties: {
            position: vector3,
            orientation: { type: "object", properties: { x: { type: "number" }, y: { type: "number" }, z: { type: "number" }, w: { type: "number" } } },
          },
        },
      },
    },
  },
};

export const EVENTS: ChannelSpec = {
  topic: "/events",
  schemaName: "assay.Event",
  schema: { type: "object", title: "assay.Event", properties: { t_s: { type: "number" }, name: { type: "string" }, detail: { type: "string" } } },
};

/**
 * One message per control step in which several cameras captured together: each camera's capture
 * time (`CameraFrame.tNs`, on the agent clock) and the skew between the earliest and latest.
 */
export const CAMERA_SYNC: ChannelSpec = {
  topic: "/camera_sync",
  schemaName: "assay.CameraSync",
  schema: {
    type: "object", title: "assay.CameraSync",
    properties: {
      timestamp: time,
      capture_time: { type: "object", description: "camera name -> capture time on the agent clock", additionalProperties: time },
      skew_ms: { type: "number", description: "latest minus earliest capture time of this step's frames, ms" },
    },
  },
};

export const META: ChannelSpec = {
  topic: "/meta",
  schemaName: "assay.EpisodeMeta",
  schema: {
    type: "object", title: "assay.EpisodeMeta",
    properties: {
      phase: { type: "string", enum: ["start", "end"] },
      firmware: { type: "string" },
      calibration_age_s: { type: ["number", "null"] },
      actuator_cycle_counts: { type: "object" },
      thermal_state: { type: "object" },
      seed: { type: "integer" },
      perturbations_realized: { type: "object" },
      cameras: { type: "object", description: "camera name -> calibration (intrinsics and extrinsics) or null" },
      camera_clocks: { type: "object", description: "camera name -> {kind, description}: where its frames' capture times come from (arrival, device_monotonic, device_offset, simulation)" },
      camera_sync: { type: "object", description: "end only: {steps, skew_ms_max, skew_ms_mean} over the control steps in which several cameras captured together" },
      cell_id: { type: "string" },
      robot: { type: "string" },
      environment: { type: "string" },
      task: { type: "string" },
      policy: { type: "object" },
      outcome: { type: "object" },
    },
  },
};

/** Topics of the fixed channels, for readers that select by topic. */
export const RecordingTopic = {
  jointStates: JOINT_STATES.topic,
  jointTargets: JOINT_TARGETS.topic,
  tf: TF.topic,
  robotDescription: ROBOT_DESCRIPTION.topic,
  ftWrist: FT_WRIST.topic,
  objectPoses: OBJECT_POSES.topic,
  events: EVENTS.topic,
  cameraSync: CAMERA_SYNC.topic,
  meta: META.topic,
} as const;

/** `{sec, nsec}` as the JSON messages carry time. */
export interface RecordedTime {
  sec: number;
  nsec: number;
}

/** A message on `/joint_states_measured`: one per control step, in the robot's joint order. */
export interface JointStateMessage {
  timestamp: RecordedTime;
  name: string[];
  position: number[];
  velocity: number[];
  effort: number[];
  temperature_c: number[];
}

/** A message on `/joint_targets_commanded`. */
export interface JointTargetsMessage {
  timestamp: RecordedTime;
  name: string[];
  position: number[];
}

export interface RecordedVector3 {
  x: number;
  y: number;
  z: number;
}

/** A message on `/gt/object_poses`: every tracked object's pose by name. */
export interface ObjectPosesMessage {
  timestamp: RecordedTime;
  poses: Record<string, { position: RecordedVector3; orientation: RecordedVector3 & { w: number } }>;
}

/** A message on `/ft_wrist`. */
export interface WrenchMessage {
  timestamp: RecordedTime;
  force: RecordedVector3;
  torque: RecordedVector3;
}

/** A message on `/events`. */
export interface EventMessage {
  t_s: number;
  name: string;
  detail: string;
}

/** A message on `/camera_sync`. */
export interface CameraSyncMessage {
  timestamp: RecordedTime;
  capture_time: Record<string, RecordedTime>;
  skew_ms: number;
}
