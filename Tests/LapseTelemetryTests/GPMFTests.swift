// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import LapseTelemetry
import Testing
import TestSupport

/// GoPro telemetry (GPMF) read from real files: raw payloads of a HERO11 and a Fusion, and the `gpmd` track of a
/// GoPro MAX video (issue #40, item 1, in part).
@Suite struct GPMFTests {
    static func raw(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: TestData.path("telemetry/gpmf/" + name))))
    }

    /// The tree of a real payload: a device (DEVC) holding its name and streams (STRM), each named.
    @Test func aRealPayloadParsesIntoDevicesAndStreams() throws {
        let items = try GPMF.parse(try Self.raw("hero11.raw"))
        let device = try #require(items.first { $0.key == "DEVC" })
        #expect(device.item("DVNM")?.text == "HERO11 Black")
        let names = (device.items ?? []).filter { $0.key == "STRM" }.compactMap { $0.item("STNM")?.text }
        #expect(names.contains("Accelerometer") && names.contains { $0.hasPrefix("GPS") }, "\(names)")
    }

    /// GPS5 and GPS9 of a HERO11 payload: positions with a 3D fix, all within metres of each other (one second of
    /// a camera), their times spread over the payload's span, UTC times a real date.
    @Test func gpsOfAHero11Payload() throws {
        let fixes = try GPMF.gpsFixes(in: try Self.raw("hero11.raw"), start: 10, duration: 1)
        #expect(fixes.count >= 10, "\(fixes.count)")
        let first = try #require(fixes.first)
        #expect(fixes.allSatisfy { $0.coordinate.distance(to: first.coordinate) < 100 })
        #expect(fixes.allSatisfy { (10..<11).contains($0.time) })
        #expect(fixes.allSatisfy { ($0.fix ?? 0) >= 2 })
        let year = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: first.utc!)
            .year
        #expect((2022...2026).contains(year ?? 0), "\(String(describing: first.utc))")
        print("hero11: \(fixes.count) fixes, first \(first.coordinate), dop \(String(describing: first.dop))")
    }

    /// The GoPro MAX video's track: 11 samples over 10.5 s; its fixes in video time, near 33.1268, −117.3273, about
    /// 13 m walked (SOURCES.txt).
    @Test func gpsOfAMaxVideo() throws {
        let fixes = try #require(
            try CameraTelemetry.gpsFixes(ofVideo: TestData.path("telemetry/gpmf/max-heromode.mp4")))
        #expect(!fixes.isEmpty)
        let known = try Coordinate(latitude: 33.1268, longitude: -117.3273)
        #expect(fixes.allSatisfy { $0.coordinate.distance(to: known) < 200 }, "\(fixes.first!.coordinate)")
        #expect(zip(fixes, fixes.dropFirst()).allSatisfy { $0.time <= $1.time })
        #expect(fixes.first!.time < 1.5 && fixes.last!.time > 9 && fixes.last!.time < 10.6)
        let walked = zip(fixes, fixes.dropFirst()).reduce(0) { $0 + $1.0.coordinate.distance(to: $1.1.coordinate) }
        print("max: \(fixes.count) fixes, \(walked) m")
        #expect(walked > 5 && walked < 60)
    }

    /// A video without telemetry has no track (nil, not an error).
    @Test func aVideoWithoutTelemetryHasNone() throws {
        #expect(
            try CameraTelemetry.gpsFixes(ofVideo: TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")) == nil
        )
    }

    /// Truncated and hostile payloads are errors, never reads out of bounds: every prefix of a real payload, an
    /// item claiming more bytes than there are, containers nested past the limit.
    @Test func brokenPayloadsAreErrors() throws {
        let real = try Self.raw("Fusion.raw")
        for cut in stride(from: 1, to: real.count, by: 97) {
            _ = try? GPMF.parse(Array(real.prefix(cut))) // must not crash
        }
        #expect(throws: LapseError.self) { try GPMF.parse(Array("GPS5l\u{14}\u{ff}\u{ff}".utf8) + [0, 0, 0, 0]) }
        var nested: [UInt8] = []
        for _ in 0..<20 {
            nested = Array("DEVC".utf8) + [0, 1, UInt8(nested.count >> 8), UInt8(nested.count & 0xFF)] + nested
        }
        #expect(throws: LapseError.self) { try GPMF.parse(nested) }
    }
}
