// A weight read by the first matmul and, transposed, by the last (a tied
// embedding and LM head), with the transpose ahead of the first direct
// read: its gradient adds a contribution of the last stage to one of the
// first.
func.func @loss(%e: tensor<4x4xf32> {dlc.name = "e", dlc.role = "param"},
                %w: tensor<4x4xf32> {dlc.name = "w", dlc.role = "param"},
                %x: tensor<2x4xf32> {dlc.name = "x", dlc.role = "input"})
    -> (tensor<f32> {dlc.name = "loss", dlc.role = "loss"}) {
  %t = dlc.transpose %e [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  %a = dlc.matmul %x, %e : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %h = dlc.matmul %a, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %b = dlc.matmul %h, %t : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %c = dlc.reduce_sum %b axes [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %c : tensor<f32>
}
