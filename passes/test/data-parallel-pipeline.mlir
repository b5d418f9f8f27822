// RUN: dlc-opt %s -split-input-file -verify-diagnostics '-dlc-data-parallel=ranks=2 zero=1'

// ZeRO-1's flat shards of a pipelined module's optimizer state are not
// built (each stage would shard its own parameters among its replicas).
// expected-error@below {{dlc-data-parallel: zero=1 does not yet shard the optimizer state of a pipelined module}}
module attributes {dlc.pipeline_stages = 2 : i64} {
}
