// SPDX-License-Identifier: GPL-3.0-or-later

/// An 8-bit RGBA image in memory: `width × height` pixels, rows top to bottom, 4 bytes a pixel
/// (R, G, B, A; straight, not premultiplied alpha), row stride exactly `width × 4` bytes.
///
/// Colours are sRGB / BT.709 primaries with full range (0–255). A value type: copies share storage
/// until one of them is written.
public struct PixelBuffer: Sendable, Equatable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// `width × height × 4` bytes.
    public var bytes: [UInt8]

    /// A buffer filled with one colour.
    /// - Parameters:
    ///   - width: pixels, ≥ 1.
    ///   - height: pixels, ≥ 1.
    ///   - fill: the RGBA colour of every pixel (default opaque black).
    public init(width: Int, height: Int, fill: RGBA = RGBA(0, 0, 0, 255)) {
        precondition(width > 0 && height > 0, "PixelBuffer needs a positive size")
        self.width = width
        self.height = height
        var b = [UInt8](repeating: 0, count: width * height * 4)
        if fill != RGBA(0, 0, 0, 0) {
            b.withUnsafeMutableBytes { raw in
                let p = raw.bindMemory(to: UInt32.self)
                let v = fill.packed
                for i in 0..<p.count { p[i] = v }
            }
        }
        bytes = b
    }

    /// A buffer whose bytes are not set (whatever the memory held), for callers that write every pixel they
    /// later read: it saves clearing, and the page faults of clearing, tens of megabytes a panorama.
    package init(uninitializedWidth width: Int, height: Int) {
        precondition(width > 0 && height > 0, "PixelBuffer needs a positive size")
        self.width = width
        self.height = height
        let count = width * height * 4
        bytes = [UInt8](unsafeUninitializedCapacity: count) { _, initialized in initialized = count }
    }

    /// Wraps existing RGBA bytes.
    /// - Precondition: `bytes.count == width × height × 4`.
    public init(width: Int, height: Int, bytes: [UInt8]) {
        precondition(width > 0 && height > 0 && bytes.count == width * height * 4, "PixelBuffer size mismatch")
        self.width = width
        self.height = height
        self.bytes = bytes
    }

    /// Bytes per row: `width × 4`.
    public var stride: Int { width * 4 }

    /// The pixel at column `x`, row `y` (0-based, from the top left).
    public subscript(x: Int, y: Int) -> RGBA {
        get {
            let i = (y * width + x) * 4
            return RGBA(bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3])
        }
        set {
            let i = (y * width + x) * 4
            bytes[i] = newValue.r
            bytes[i + 1] = newValue.g
            bytes[i + 2] = newValue.b
            bytes[i + 3] = newValue.a
        }
    }

    /// True when every pixel has alpha 255.
    public var isOpaque: Bool {
        bytes.withUnsafeBytes { raw in
            var i = 3
            while i < raw.count {
                if raw[i] != 255 { return false }
                i += 4
            }
            return true
        }
    }
}

/// One RGBA pixel, 8 bits a channel, straight alpha.
public struct RGBA: Hashable, Sendable, CustomStringConvertible {
    public var r: UInt8, g: UInt8, b: UInt8, a: UInt8
    /// A colour of red, green, blue and alpha, 0–255 each (alpha 255: opaque).
    public init(_ r: UInt8, _ g: UInt8, _ b: UInt8, _ a: UInt8 = 255) {
        self.r = r
        self.g = g
        self.b = b
        self.a = a
    }

    /// Parses `#RRGGBB`, `RRGGBB` or `#RRGGBBAA`. Returns `nil` for anything else.
    public init?(hex: String) {
        var s = Substring(hex)
        if s.hasPrefix("#") { s = s.dropFirst() }
        guard s.count == 6 || s.count == 8, let v = UInt32(s, radix: 16) else { return nil }
        if s.count == 6 {
            self.init(UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF), 255)
        } else {
            self.init(UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF))
        }
    }

    /// The four bytes as one little-endian word (R in the lowest byte), as stored in a ``PixelBuffer``.
    public var packed: UInt32 { UInt32(r) | UInt32(g) << 8 | UInt32(b) << 16 | UInt32(a) << 24 }

    /// `#RRGGBB`, or `#RRGGBBAA` when not opaque.
    public var description: String {
        func h(_ v: UInt8) -> String {
            let s = String(v, radix: 16)
            return s.count == 1 ? "0" + s : s
        }
        return "#" + h(r) + h(g) + h(b) + (a == 255 ? "" : h(a))
    }
}
