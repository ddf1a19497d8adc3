// SPDX-License-Identifier: GPL-3.0-or-later
import LapseMedia

/// How a frame's transparency matches a reference's: pixels transparent in one (alpha < 128) and opaque in the
/// other, and of those the ones inside the reference's shape (the pixel and its four neighbours opaque there: a
/// see-through hole or hairline, not an edge).
public enum TransparencyCheck {
    public static func compare(_ frame: PixelBuffer, against reference: PixelBuffer) -> (mismatches: Int, inside: Int) {
        precondition(frame.width == reference.width && frame.height == reference.height, "sizes differ")
        let w = reference.width
        let h = reference.height
        func opaque(_ x: Int, _ y: Int) -> Bool { reference.bytes[(y * w + x) * 4 + 3] >= 128 }
        var mismatches = 0
        var inside = 0
        for y in 0..<h {
            for x in 0..<w where (frame.bytes[(y * w + x) * 4 + 3] < 128) == opaque(x, y) {
                mismatches += 1
                if x > 0, y > 0, x + 1 < w, y + 1 < h,
                    opaque(x, y), opaque(x - 1, y), opaque(x + 1, y), opaque(x, y - 1), opaque(x, y + 1)
                {
                    inside += 1
                }
            }
        }
        return (mismatches, inside)
    }
}
