// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseTelemetry
import TestSupport
import Testing

/// Google's Camera Motion Metadata (CAMM) samples, written here byte by byte as the specification lays them out
/// (little-endian: uint16 reserved, uint16 type, the type's fields), read back exactly (issue #40, item 1).
@Suite struct CAMMTests {
    static func packet(_ type: UInt16, _ fields: [Any]) -> [UInt8] { CAMMFile.packet(type, fields) }

    static let gps = CAMM.GPS(
        timeGPSEpoch: 1_419_000_000.25, fixType: 3, latitude: 52.4405123456789, longitude: 6.8901987654321,
        altitude: 31.5, horizontalAccuracy: 2.25, verticalAccuracy: 4.5, velocityEast: 3, velocityNorth: 4,
        velocityUp: -0.5, speedAccuracy: 0.125)

    /// Every type, 0 to 7, each in a sample of its own and all eight in one sample, with the sizes the
    /// specification gives (16, 12, 16, 16, 16, 28, 60, 16 bytes).
    static let written: [(bytes: [UInt8], packet: CAMM.Packet)] = [
        (packet(0, [Float(0.1), Float(-0.2), Float(1.5)]), .angleAxis(SIMD3(0.1, -0.2, 1.5))),
        (
            packet(1, [Int32(8_000_000), Int32(-12_345)]),
            .exposure(pixelExposureTime: 8_000_000, rollingShutterSkewTime: -12_345)
        ),
        (packet(2, [Float(0.01), Float(0.02), Float(-3)]), .gyro(SIMD3(0.01, 0.02, -3))),
        (packet(3, [Float(0.2), Float(-9.81), Float(0.3)]), .acceleration(SIMD3(0.2, -9.81, 0.3))),
        (packet(4, [Float(1), Float(2), Float(3)]), .position(SIMD3(1, 2, 3))),
        (packet(5, [52.44, 6.89, 12.75]), .minimalGPS(latitude: 52.44, longitude: 6.89, altitude: 12.75)),
        (
            packet(
                6,
                [
                    gps.timeGPSEpoch, gps.fixType, gps.latitude, gps.longitude, gps.altitude, gps.horizontalAccuracy,
                    gps.verticalAccuracy, gps.velocityEast, gps.velocityNorth, gps.velocityUp, gps.speedAccuracy
                ]), .gps(gps)
        ),
        (packet(7, [Float(20.5), Float(-3.25), Float(41)]), .magneticField(SIMD3(20.5, -3.25, 41)))
    ]

    @Test func everyPacketTypeReadsBackExactly() throws {
        #expect(Self.written.map(\.bytes.count) == [16, 12, 16, 16, 16, 28, 60, 16])
        for (bytes, packet) in Self.written {
            #expect(try CAMM.packets(in: bytes) == [packet])
        }
        #expect(try CAMM.packets(in: Self.written.flatMap(\.bytes)) == Self.written.map(\.packet))
    }

    /// GPS positions: type 6 with a fix (its UTC time GPS time less 18 leap seconds, its accuracy and speed),
    /// type 5; type 6 without a fix and positions at 0,0 left out.
    @Test func gpsFixesFromTypesFiveAndSix() throws {
        let six = try CAMM.gpsFixes(in: Self.written[6].bytes, time: 2.5)
        #expect(six.count == 1)
        let fix = try #require(six.first)
        #expect(fix.time == 2.5 && fix.fix == 3 && fix.horizontalAccuracy == 2.25 && fix.speed == 5)
        #expect(fix.coordinate.latitude == 52.4405123456789 && fix.coordinate.longitude == 6.8901987654321)
        // 1980-01-06 + 1 419 000 000.25 s − 18 s.
        #expect(fix.utc == Date(timeIntervalSince1970: 315_964_800 + 1_419_000_000.25 - 18))
        let five = try CAMM.gpsFixes(in: Self.written[5].bytes, time: 1)
        #expect(five.map(\.coordinate.latitude) == [52.44] && five.first?.altitude == 12.75 && five.first?.fix == nil)
        var noFix = Self.gps
        noFix.fixType = 0
        let unfixed = Self.packet(
            6,
            [
                noFix.timeGPSEpoch, noFix.fixType, noFix.latitude, noFix.longitude, noFix.altitude,
                noFix.horizontalAccuracy, noFix.verticalAccuracy, noFix.velocityEast, noFix.velocityNorth,
                noFix.velocityUp, noFix.speedAccuracy
            ])
        #expect(try CAMM.packets(in: unfixed) == [.gps(noFix)])
        #expect(try CAMM.gpsFixes(in: unfixed, time: 0).isEmpty)
        #expect(try CAMM.gpsFixes(in: Self.packet(5, [0.0, 0.0, 0.0]), time: 0).isEmpty)
        #expect(try CAMM.gpsFixes(in: Self.written[3].bytes, time: 0).isEmpty)
    }

    /// Truncated and hostile samples are errors, never reads out of bounds: every cut of every packet that leaves
    /// a header; a packet of an unknown type ends the sample.
    @Test func brokenSamplesAreErrors() throws {
        for (bytes, _) in Self.written {
            for cut in 4..<bytes.count {
                #expect(throws: LapseError.self) { try CAMM.packets(in: Array(bytes.prefix(cut))) }
            }
        }
        // A type the specification does not define: the packets before it kept, the rest of the sample passed over.
        let unknown = Self.written[2].bytes + Self.packet(8, [Float(1), Float(2), Float(3)]) + Self.written[3].bytes
        #expect(try CAMM.packets(in: unknown) == [Self.written[2].packet])
        #expect(try CAMM.packets(in: []) == [])
    }
}
