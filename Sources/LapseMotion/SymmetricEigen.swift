// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Eigenvalues and eigenvectors of a small real symmetric matrix by cyclic Jacobi rotations (Golub & Van Loan,
/// "Matrix Computations", §8.5); exact to rounding for the 3×3 and 4×4 matrices of the rotation fits.
struct SymmetricEigen {
    /// Eigenvalues in decreasing order.
    let values: [Double]
    /// `vectors[k]` is the unit eigenvector of `values[k]`.
    let vectors: [[Double]]

    /// - Parameter matrix: `n × n`, row by row, symmetric (only the upper triangle is read).
    init(_ matrix: [[Double]]) {
        let n = matrix.count
        var a = matrix
        for i in 0..<n { for j in 0..<i { a[i][j] = a[j][i] } }
        var v = (0..<n).map { i in (0..<n).map { $0 == i ? 1.0 : 0.0 } }
        for _ in 0..<50 {
            var off = 0.0
            for i in 0..<n { for j in (i + 1)..<n { off += a[i][j] * a[i][j] } }
            if off < 1e-30 { break }
            for p in 0..<n {
                for q in (p + 1)..<n where abs(a[p][q]) > 1e-300 {
                    let theta = (a[q][q] - a[p][p]) / (2 * a[p][q])
                    let t = (theta >= 0 ? 1.0 : -1.0) / (abs(theta) + (theta * theta + 1).squareRoot())
                    let c = 1 / (t * t + 1).squareRoot()
                    let s = t * c
                    for k in 0..<n {
                        let akp = a[k][p]
                        let akq = a[k][q]
                        a[k][p] = c * akp - s * akq
                        a[k][q] = s * akp + c * akq
                    }
                    for k in 0..<n {
                        let apk = a[p][k]
                        let aqk = a[q][k]
                        a[p][k] = c * apk - s * aqk
                        a[q][k] = s * apk + c * aqk
                    }
                    for k in 0..<n {
                        let vkp = v[k][p]
                        let vkq = v[k][q]
                        v[k][p] = c * vkp - s * vkq
                        v[k][q] = s * vkp + c * vkq
                    }
                }
            }
        }
        let order = (0..<n).sorted { a[$0][$0] > a[$1][$1] }
        values = order.map { a[$0][$0] }
        vectors = order.map { k in (0..<n).map { v[$0][k] } }
    }
}
