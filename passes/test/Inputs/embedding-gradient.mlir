// An embedding's gradient as dlc.gather's gradient rule writes it, for
// sort-scatters-numerics.test: 40 token rows (random ids 0..3: many ties)
// of 5 added into 7 rows of zeros, and into 7 other rows (left a scatter).
func.func @gradient(%ids: tensor<8x5xi64>, %g: tensor<40x5xf32>, %acc: tensor<7x5xf32>) -> (tensor<7x5xf32>, tensor<7x5xf32>) {
  %zeros = dlc.constant dense<0.0> : tensor<7x5xf32>
  %column = dlc.reshape %ids : tensor<8x5xi64> to tensor<40x1xi64>
  %indices = dlc.broadcast_to %column : tensor<40x1xi64> to tensor<40x5xi64>
  %s = dlc.scatter_elements %zeros[%indices], %g {axis = 0 : i64} reduction add : tensor<7x5xf32>, tensor<40x5xi64>, tensor<40x5xf32>
  %t = dlc.scatter_elements %acc[%indices], %g {axis = 0 : i64} reduction add : tensor<7x5xf32>, tensor<40x5xi64>, tensor<40x5xf32>
  return %s, %t : tensor<7x5xf32>, tensor<7x5xf32>
}
