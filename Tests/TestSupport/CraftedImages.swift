// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Image files whose headers say what a test needs (a size too large to decode) without the pixels behind it.
public enum CraftedImages {
    /// A PNG whose IHDR declares `width × height` (8-bit RGB) followed by one tiny IDAT and IEND; every chunk's
    /// CRC is right, so only the size (and the missing rows) is wrong.
    public static func png(width: Int, height: Int) -> [UInt8] {
        func be32(_ v: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: v >> $0) } }
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return be32(data.count) + body + be32(Int(crc32(body)))
        }
        let ihdr = be32(width) + be32(height) + [8, 2, 0, 0, 0]
        let idat: [UInt8] = [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01] // zlib: an empty stored stream
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", ihdr) + chunk("IDAT", idat)
            + chunk("IEND", [])
    }

    /// The JPEG `jpeg` with the size in its first SOFn segment replaced by `width × height` (each < 65536).
    public static func jpeg(_ jpeg: [UInt8], width: Int, height: Int) -> [UInt8]? {
        var b = jpeg
        var i = 2
        while i + 9 < b.count, b[i] == 0xFF {
            let marker = b[i + 1]
            let length = Int(b[i + 2]) << 8 | Int(b[i + 3])
            if [0xC0, 0xC1, 0xC2].contains(marker) {
                b[i + 5] = UInt8(height >> 8)
                b[i + 6] = UInt8(height & 0xFF)
                b[i + 7] = UInt8(width >> 8)
                b[i + 8] = UInt8(width & 0xFF)
                return b
            }
            i += 2 + length
        }
        return nil
    }

    /// CRC-32 (ISO 3309, as PNG's chunks use: polynomial 0xEDB88320 reflected, initial and final XOR 0xFFFFFFFF).
    public static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
