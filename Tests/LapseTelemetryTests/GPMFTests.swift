// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import LapseTelemetry
import TestSupport
import Testing

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
            try CameraTelemetry.gpsFixes(
                ofVideo: URL(fileURLWithPath: TestData.path("telemetry/gpmf/max-heromode.mp4"))))
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
            try CameraTelemetry.gpsFixes(
                ofVideo: URL(fileURLWithPath: TestData.path("pano360/valiant360_overpass/overpass-clip.mp4"))) == nil
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

    /// The MAX video's gravity (GRAV, one vector a frame): as many vectors as the track's `GRAV` items hold, read
    /// here from the track's bytes by an independent path (ffmpeg's copy of the data stream, the documented
    /// 8-byte KLV header, big-endian int16 scaled by 32767); unit length; in the camera frame GoPro writes (x
    /// right, y down the picture, z out of the lens): the walker held the camera upright (y ≈ 1) and pitched down,
    /// as its picture shows (the path's vanishing point 50 of 480 rows above the middle): a tilt of −4° to −12°.
    @Test func gravityOfAMaxVideo() throws {
        let video = TestData.path("telemetry/gpmf/max-heromode.mp4")
        let telemetry = try #require(try CameraTelemetry.read(ofVideo: URL(fileURLWithPath: video)))
        #expect(telemetry.format == .gpmf)
        let dir = TestData.scratchDirectory("gpmf-grav")
        defer { try? FileManager.default.removeItem(at: dir) }
        let dump = dir.appendingPathComponent("track.bin").path
        let r = try Shell.run(
            "ffmpeg", ["-v", "error", "-y", "-i", video, "-map", "0:3", "-c", "copy", "-f", "data", dump])
        #expect(r.status == 0, "\(r.stderr)")
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: dump)))
        var count = 0
        var first: SIMD3<Double>?
        var at = 0
        while at + 14 <= bytes.count {
            if bytes[at..<(at + 4)].elementsEqual("GRAV".utf8), bytes[at + 4] == UInt8(ascii: "s"), bytes[at + 5] == 6 {
                count += Int(bytes[at + 6]) << 8 | Int(bytes[at + 7])
                if first == nil {
                    func int16(_ k: Int) -> Double {
                        Double(Int16(bitPattern: UInt16(bytes[k]) << 8 | UInt16(bytes[k + 1])))
                    }
                    first = SIMD3(int16(at + 8), int16(at + 10), int16(at + 12)) / 32767
                }
                at += 8
            } else {
                at += 1
            }
        }
        #expect(count > 250 && telemetry.gravity.count == count, "\(telemetry.gravity.count) of \(count)")
        let g = try #require(telemetry.gravity.first)
        let expected = try #require(first)
        let unit = expected / (expected * expected).sum().squareRoot()
        #expect(abs((g.vector - unit).max()) < 1e-9 && abs((g.vector - unit).min()) < 1e-9, "\(g.vector) \(unit)")
        #expect(telemetry.gravity.allSatisfy { abs(($0.vector * $0.vector).sum() - 1) < 1e-9 && $0.vector.y > 0.9 })
        #expect(zip(telemetry.gravity, telemetry.gravity.dropFirst()).allSatisfy { $0.time < $1.time })
        let level = g.level
        #expect(level.tilt > -12 && level.tilt < -4 && abs(level.roll) < 6, "\(level)")
        // Between two samples the vector is interpolated; far outside the track there is none.
        let a = telemetry.gravity[10]
        let b = telemetry.gravity[11]
        let mid = try #require(telemetry.gravity(at: (a.time + b.time) / 2))
        let expectedMid = (a.vector + b.vector) / ((a.vector + b.vector) * (a.vector + b.vector)).sum().squareRoot()
        #expect(abs((mid - expectedMid).max()) < 1e-9 && abs((mid - expectedMid).min()) < 1e-9)
        #expect(telemetry.gravity(at: 60) == nil)
        // A gap in the track says nothing: 10 s between two samples, nothing in its middle, near either end the
        // interpolation.
        let gap = CameraTelemetry(
            format: .gpmf, fixes: [],
            gravity: [
                CameraGravity(time: 0, vector: SIMD3(0, 1, 0)), CameraGravity(time: 10, vector: SIMD3(0, 0.8, 0.6))
            ])
        #expect(gap.gravity(at: 5) == nil)
        #expect(gap.gravity(at: 0.3) != nil && gap.gravity(at: 9.8) != nil)
    }
}
