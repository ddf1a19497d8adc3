// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseMedia

/// Where the pixels of a cropped 360° picture sit in its full equirectangular frame: a camera that does not
/// record the nadir or the zenith (or a picture trimmed after stitching) keeps a band of the sphere, and the
/// rest of the 2:1 frame is missing.
///
/// Panoramax gives it as `pers:interior_orientation.sensor_array_dimensions` (the full frame, `[columns, rows]`)
/// and `visible_area` (the margins cut off, `[left, top, right, bottom]` in full-frame pixels), which GeoVisio
/// derives from the picture's XMP `GPano:FullPanoWidthPixels`, `FullPanoHeightPixels`, `CroppedAreaLeftPixels`,
/// `CroppedAreaTopPixels`, `CroppedAreaImageWidthPixels` and `CroppedAreaImageHeightPixels`.
public struct PanoramaCrop: Sendable, Codable, Equatable, Hashable {
    /// The full equirectangular frame, pixels (`fullWidth == 2 · fullHeight`).
    public var fullWidth: Int
    /// The full equirectangular frame's height, pixels.
    public var fullHeight: Int
    /// The picture's rectangle in the full frame, pixels from its top-left corner.
    public var left: Int
    /// The picture's top edge in the full frame, pixels from its top.
    public var top: Int
    /// The picture's width, pixels.
    public var width: Int
    /// The picture's height, pixels.
    public var height: Int

    /// - Throws: ``LapseError`` `.invalidInput` when the rectangle does not lie inside a 2:1 frame.
    public init(fullWidth: Int, fullHeight: Int, left: Int, top: Int, width: Int, height: Int) throws {
        guard fullWidth > 0, fullHeight > 0, fullWidth == 2 * fullHeight else {
            throw LapseError(.invalidInput, "cropped panorama", "the full frame \(fullWidth)×\(fullHeight) is not 2:1")
        }
        guard left >= 0, top >= 0, width > 0, height > 0, left + width <= fullWidth, top + height <= fullHeight else {
            throw LapseError(
                .invalidInput, "cropped panorama",
                "\(width)×\(height) at \(left),\(top) does not lie inside the \(fullWidth)×\(fullHeight) frame")
        }
        self.fullWidth = fullWidth
        self.fullHeight = fullHeight
        self.left = left
        self.top = top
        self.width = width
        self.height = height
    }

    /// From Panoramax's `sensor_array_dimensions` (`[fullWidth, fullHeight]`) and `visible_area`
    /// (`[left, top, right, bottom]` margins).
    /// - Throws: as ``init(fullWidth:fullHeight:left:top:width:height:)``.
    public init(sensorArrayDimensions full: [Int], visibleArea margins: [Int]) throws {
        guard full.count == 2, margins.count == 4 else {
            throw LapseError(
                .invalidInput, "cropped panorama", "sensor_array_dimensions needs 2 numbers and visible_area 4")
        }
        try self.init(
            fullWidth: full[0], fullHeight: full[1], left: margins[0], top: margins[1],
            width: full[0] - margins[0] - margins[2], height: full[1] - margins[1] - margins[3])
    }

    /// Whether the picture covers the whole frame (nothing to place).
    public var isWhole: Bool { left == 0 && top == 0 && width == fullWidth && height == fullHeight }

    /// The picture's rectangle, in pixels, in a full frame `frameWidth` pixels wide (the picture scaled by
    /// `frameWidth / fullWidth`, edges rounded to whole pixels).
    public func rectangle(inFrameOfWidth frameWidth: Int) -> (x: Int, y: Int, width: Int, height: Int) {
        let k = Double(frameWidth) / Double(fullWidth)
        let frameHeight = frameWidth / 2
        let x0 = Int((Double(left) * k).rounded())
        let y0 = Int((Double(top) * k).rounded())
        let x1 = min(frameWidth, Int((Double(left + width) * k).rounded()))
        let y1 = min(frameHeight, Int((Double(top + height) * k).rounded()))
        return (x0, y0, max(1, x1 - x0), max(1, y1 - y0))
    }

    /// The full frame `frameWidth × frameWidth/2` with the picture's pixels (`picture`, already scaled to
    /// ``rectangle(inFrameOfWidth:)``) in their place and the missing rest opaque black.
    public func frame(width frameWidth: Int, placing picture: PixelBuffer) -> PixelBuffer {
        let frameHeight = frameWidth / 2
        var canvas = PixelBuffer(width: frameWidth, height: frameHeight, fill: RGBA(0, 0, 0, 255))
        let r = rectangle(inFrameOfWidth: frameWidth)
        let w = min(picture.width, frameWidth - r.x)
        let h = min(picture.height, frameHeight - r.y)
        guard w > 0, h > 0 else { return canvas }
        let pw = picture.width
        picture.bytes.withUnsafeBufferPointer { src in
            canvas.bytes.withUnsafeMutableBufferPointer { dst in
                for row in 0..<h {
                    (dst.baseAddress! + ((r.y + row) * frameWidth + r.x) * 4).update(
                        from: src.baseAddress! + row * pw * 4, count: w * 4)
                }
            }
        }
        return canvas
    }
}
