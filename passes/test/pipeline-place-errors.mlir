// RUN: dlc-opt %s --split-input-file --dlc-pipeline-place -verify-diagnostics

// A value of one stage read on another without a transfer.
module attributes {dlc.pipeline_stages = 2 : i64} {
  func.func @crossing(%x: tensor<2xf32>) -> tensor<2xf32> {
    %a = dlc.neg %x {dlc.pp_stage = 0 : i64} : tensor<2xf32>
    // expected-error @below {{uses operand #0 on stage 1, which does not hold it (held on stage 0): a value crosses stages only through dlc.pp_transfer}}
    %b = dlc.exp %a {dlc.pp_stage = 1 : i64} : tensor<2xf32>
    return %b : tensor<2xf32>
  }
}

// -----

// An op without a stage that two stages read, over a value only one holds.
module attributes {dlc.pipeline_stages = 2 : i64} {
  func.func @shared(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
    %a = dlc.neg %x {dlc.pp_stage = 0 : i64} : tensor<2xf32>
    // expected-error @below {{uses operand #0 on stage 1, which does not hold it (held on stage 0)}}
    %e = dlc.exp %a : tensor<2xf32>
    %b = dlc.abs %e {dlc.pp_stage = 0 : i64} : tensor<2xf32>
    %c = dlc.abs %e {dlc.pp_stage = 1 : i64} : tensor<2xf32>
    return %b, %c : tensor<2xf32>, tensor<2xf32>
  }
}

// -----

// A transfer of a value its sender does not hold.
module attributes {dlc.pipeline_stages = 3 : i64} {
  func.func @sender(%x: tensor<2xf32>) -> tensor<2xf32> {
    %a = dlc.neg %x {dlc.pp_stage = 0 : i64} : tensor<2xf32>
    // expected-error @below {{uses operand #0 on stage 1, which does not hold it (held on stage 0)}}
    %t = dlc.pp_transfer %a from 1 to 2 : tensor<2xf32>
    %b = dlc.exp %t {dlc.pp_stage = 2 : i64} : tensor<2xf32>
    return %b : tensor<2xf32>
  }
}

// -----

// A result marked with a stage that does not hold it.
module attributes {dlc.pipeline_stages = 2 : i64} {
  func.func @result(%x: tensor<2xf32>) -> (tensor<2xf32> {dlc.pp_stage = 1 : i64}) {
    %a = dlc.neg %x {dlc.pp_stage = 0 : i64} : tensor<2xf32>
    // expected-error @below {{uses operand #0 on stage 1, which does not hold it (held on stage 0)}}
    return %a : tensor<2xf32>
  }
}

// -----

// An op no stage reads, over values of two stages.
module attributes {dlc.pipeline_stages = 2 : i64} {
  func.func @apart(%x: tensor<2xf32>) -> tensor<2xf32> {
    %a = dlc.neg %x {dlc.pp_stage = 0 : i64} : tensor<2xf32>
    %b = dlc.exp %x {dlc.pp_stage = 1 : i64} : tensor<2xf32>
    // expected-error @below {{reads values no single stage holds together}}
    %c = dlc.add %a, %b : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
    return %c : tensor<2xf32>
  }
}

// -----

// More stages than a set of stages holds.
module attributes {dlc.pipeline_stages = 65 : i64} {
  // expected-error @below {{is in a module of 65 pipeline stages; placement takes 2 to 64}}
  func.func @many(%x: tensor<2xf32>) -> tensor<2xf32> {
    %a = dlc.neg %x {dlc.pp_stage = 0 : i64} : tensor<2xf32>
    return %a : tensor<2xf32>
  }
}
