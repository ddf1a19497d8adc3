// SPDX-License-Identifier: GPL-3.0-or-later
internal import CGIF
import Foundation
import LapseCore
import LapseMedia

/// A GIF read back with giflib (`DGifSlurp`): its structure, and its frames composited as a viewer shows them.
public struct GIFFile: Sendable {
    /// One image of the file, as stored.
    public struct Image: Sendable {
        /// Position and size on the logical screen, in pixels.
        public var x: Int, y: Int, width: Int, height: Int
        /// Delay in centiseconds (from the Graphic Control Extension; 0 when there is none).
        public var delay: Int
        /// Disposal method (0 unspecified, 1 keep, 2 background, 3 previous).
        public var disposal: Int
        /// Transparent index, if any.
        public var transparentIndex: Int?
        /// Whether the image has its own colour map.
        public var hasLocalColorMap: Bool
        /// Colour map size (a power of two).
        public var colorCount: Int
        /// RGBA of the image's pixels (transparent index → alpha 0), `width × height`.
        public var pixels: [UInt8]
    }

    /// `GIF87a` or `GIF89a`.
    public var version: String
    /// Logical screen size in pixels.
    public var width: Int
    /// Logical screen height in pixels.
    public var height: Int
    /// Loop count from the NETSCAPE2.0 extension (0 = forever); `nil` when the file has none.
    public var loopCount: Int?
    /// The frames' images in file order, each with its rectangle, delay and disposal.
    public var images: [Image]

    /// Delays of all images, in centiseconds.
    public var delays: [Int] { images.map(\.delay) }

    /// Reads the GIF file at `url`.
    /// - Throws: ``LapseError`` `.invalidInput` when it is not a readable GIF.
    public init(url: URL) throws {
        let path = url.filePath
        var error: Int32 = 0
        guard let gif = DGifOpenFileName(path, &error) else {
            throw LapseError(.invalidInput, path, "cannot open the GIF (\(GIFWriter.message(error)))")
        }
        defer {
            var e: Int32 = 0
            DGifCloseFile(gif, &e)
        }
        guard DGifSlurp(gif) == GIF_OK else {
            throw LapseError(.invalidInput, path, "not a readable GIF (\(GIFWriter.message(gif.pointee.Error)))")
        }
        let head = FileManager.default.contents(atPath: path)?.prefix(6) ?? Data()
        version = String(decoding: head, as: UTF8.self)
        width = Int(gif.pointee.SWidth)
        height = Int(gif.pointee.SHeight)
        var loop: Int?
        var images: [Image] = []
        let globalMap = gif.pointee.SColorMap
        for n in 0..<Int(gif.pointee.ImageCount) {
            let saved = gif.pointee.SavedImages[n]
            // The NETSCAPE2.0 block: an application block "NETSCAPE2.0" followed by a sub-block [1, lo, hi].
            let blocks = (0..<Int(saved.ExtensionBlockCount)).map { saved.ExtensionBlocks[$0] }
            for (i, b) in blocks.enumerated() where b.Function == APPLICATION_EXT_FUNC_CODE && b.ByteCount == 11 {
                let name = String(decoding: UnsafeBufferPointer(start: b.Bytes, count: 11), as: UTF8.self)
                if name == "NETSCAPE2.0", i + 1 < blocks.count, blocks[i + 1].ByteCount >= 3 {
                    let d = blocks[i + 1].Bytes!
                    loop = Int(d[1]) | Int(d[2]) << 8
                }
            }
            var gcb = GraphicsControlBlock(DisposalMode: 0, UserInputFlag: false, DelayTime: 0, TransparentColor: -1)
            let hasGCB = DGifSavedExtensionToGCB(gif, Int32(n), &gcb) == GIF_OK
            let desc = saved.ImageDesc
            let w = Int(desc.Width)
            let h = Int(desc.Height)
            guard let map = desc.ColorMap ?? globalMap else {
                throw LapseError(.invalidInput, path, "image \(n) has no colour map")
            }
            let transparent = hasGCB && gcb.TransparentColor >= 0 ? Int(gcb.TransparentColor) : nil
            var pixels = [UInt8](repeating: 0, count: w * h * 4)
            let count = Int(map.pointee.ColorCount)
            for i in 0..<(w * h) {
                let index = Int(saved.RasterBits[i])
                if index == transparent || index >= count { continue }
                let c = map.pointee.Colors[index]
                pixels[i * 4] = c.Red
                pixels[i * 4 + 1] = c.Green
                pixels[i * 4 + 2] = c.Blue
                pixels[i * 4 + 3] = 255
            }
            images.append(
                Image(
                    x: Int(desc.Left), y: Int(desc.Top), width: w, height: h,
                    delay: hasGCB ? Int(gcb.DelayTime) : 0, disposal: hasGCB ? Int(gcb.DisposalMode) : 0,
                    transparentIndex: transparent, hasLocalColorMap: desc.ColorMap != nil,
                    colorCount: count, pixels: pixels))
        }
        self.loopCount = loop
        self.images = images
    }

    /// Every frame as displayed (images drawn over the canvas, disposal applied between them), RGBA of the
    /// logical screen size; pixels never drawn are transparent (alpha 0).
    public func compositedFrames() -> [PixelBuffer] {
        var canvas = PixelBuffer(width: width, height: height, fill: RGBA(0, 0, 0, 0))
        var frames: [PixelBuffer] = []
        for image in images {
            let before = canvas
            for y in 0..<image.height where image.y + y < height {
                for x in 0..<image.width where image.x + x < width {
                    let s = (y * image.width + x) * 4
                    guard image.pixels[s + 3] != 0 else { continue }
                    let d = ((image.y + y) * width + image.x + x) * 4
                    for c in 0..<4 { canvas.bytes[d + c] = image.pixels[s + c] }
                }
            }
            frames.append(canvas)
            switch image.disposal {
            case 2:
                for y in 0..<image.height where image.y + y < height {
                    for x in 0..<image.width where image.x + x < width {
                        let d = ((image.y + y) * width + image.x + x) * 4
                        for c in 0..<4 { canvas.bytes[d + c] = 0 }
                    }
                }
            case 3: canvas = before
            default: break
            }
        }
        return frames
    }
}
