// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore

/// Google's Camera Motion Metadata (CAMM), as its specification defines it
/// (developers.google.com/streetview/publish/camm-spec): the samples of an MP4 track whose sample entry is `camm`
/// (handler `meta`), written by Insta360, Ricoh Theta, Labpano and other 360° cameras. Each packet is a little-endian
/// `uint16` reserved (0), a `uint16` type and that type's fields; a sample holds one packet or several in a row.
/// Parsed with every length checked: a truncated or hostile sample is an error, never a read out of bounds.
public enum CAMM {
    /// One packet, its fields in the specification's units.
    public enum Packet: Sendable, Equatable {
        /// Type 0: angle-axis rotation (radians) from the camera's local frame to a world frame the application
        /// defines.
        case angleAxis(SIMD3<Float>)
        /// Type 1: a frame's pixel exposure time and rolling-shutter skew, nanoseconds.
        case exposure(pixelExposureTime: Int32, rollingShutterSkewTime: Int32)
        /// Type 2: gyroscope, radians a second about the camera's x, y, z.
        case gyro(SIMD3<Float>)
        /// Type 3: accelerometer, metres a second² along the camera's x, y, z.
        case acceleration(SIMD3<Float>)
        /// Type 4: the camera's 3D position in the world frame of type 0.
        case position(SIMD3<Float>)
        /// Type 5: minimal GPS: latitude and longitude (degrees), altitude (metres).
        case minimalGPS(latitude: Double, longitude: Double, altitude: Double)
        /// Type 6: GPS with its time, fix and accuracy.
        case gps(GPS)
        /// Type 7: ambient magnetic field, microtesla along the camera's x, y, z.
        case magneticField(SIMD3<Float>)
    }

    /// A type-6 packet's fields.
    public struct GPS: Sendable, Equatable {
        /// Seconds since the GPS epoch (1980-01-06 00:00 UTC), GPS time (no leap seconds).
        public var timeGPSEpoch: Double
        /// 0 no fix, 2 a 2D fix, 3 a 3D fix.
        public var fixType: Int32
        /// Degrees, WGS84 (south negative).
        public var latitude: Double
        /// Degrees, WGS84 (west negative).
        public var longitude: Double
        /// Metres above the WGS84 ellipsoid.
        public var altitude: Float
        /// Metres.
        public var horizontalAccuracy: Float
        /// Vertical accuracy, metres.
        public var verticalAccuracy: Float
        /// Metres a second.
        public var velocityEast: Float
        /// Velocity northwards, metres a second.
        public var velocityNorth: Float
        /// Velocity upwards, metres a second.
        public var velocityUp: Float
        /// Speed accuracy, metres a second.
        public var speedAccuracy: Float

        /// A GPS record with the given values (see the properties).
        public init(
            timeGPSEpoch: Double, fixType: Int32, latitude: Double, longitude: Double, altitude: Float,
            horizontalAccuracy: Float, verticalAccuracy: Float, velocityEast: Float, velocityNorth: Float,
            velocityUp: Float, speedAccuracy: Float
        ) {
            (self.timeGPSEpoch, self.fixType, self.latitude, self.longitude, self.altitude) = (
                timeGPSEpoch, fixType, latitude, longitude, altitude
            )
            (self.horizontalAccuracy, self.verticalAccuracy) = (horizontalAccuracy, verticalAccuracy)
            (self.velocityEast, self.velocityNorth, self.velocityUp, self.speedAccuracy) = (
                velocityEast, velocityNorth, velocityUp, speedAccuracy
            )
        }

        /// The fix's UTC time: GPS time less the 18 leap seconds since 2017 (the offset of every date a camera
        /// writing CAMM has recorded).
        public var utc: Date { Date(timeIntervalSince1970: 315_964_800 + timeGPSEpoch - 18) }
    }

    /// Bytes of each type's fields after the 4-byte header, by type.
    static let fieldBytes = [12, 8, 12, 12, 12, 24, 56, 12]

    /// The packets of one sample, in order, up to the first of a type the specification does not define (whose
    /// length is unknown: the rest of the sample is passed over).
    /// - Throws: ``LapseError`` `.invalidInput` for a packet that runs past the end of the sample.
    public static func packets(in sample: [UInt8]) throws -> [Packet] {
        var out: [Packet] = []
        var reader = LittleEndianReader(bytes: sample[...])
        while reader.remaining >= 4 {
            _ = try reader.uint16() // reserved
            let type = Int(try reader.uint16())
            // A type the specification does not define (yet): its length is unknown, so the rest of the sample
            // is passed over, not the track.
            guard type < fieldBytes.count else { break }
            guard reader.remaining >= fieldBytes[type] else {
                throw LapseError(.invalidInput, "CAMM", "packet of type \(type) runs past the end of its sample")
            }
            switch type {
            case 0: out.append(.angleAxis(try reader.float3()))
            case 1:
                out.append(.exposure(pixelExposureTime: try reader.int32(), rollingShutterSkewTime: try reader.int32()))
            case 2: out.append(.gyro(try reader.float3()))
            case 3: out.append(.acceleration(try reader.float3()))
            case 4: out.append(.position(try reader.float3()))
            case 5:
                out.append(
                    .minimalGPS(
                        latitude: try reader.double(), longitude: try reader.double(), altitude: try reader.double()))
            case 6:
                let time = try reader.double()
                let fix = try reader.int32()
                let latitude = try reader.double()
                let longitude = try reader.double()
                var f: [Float] = []
                for _ in 0..<7 { f.append(try reader.float()) }
                out.append(
                    .gps(
                        GPS(
                            timeGPSEpoch: time, fixType: fix, latitude: latitude, longitude: longitude, altitude: f[0],
                            horizontalAccuracy: f[1], verticalAccuracy: f[2], velocityEast: f[3], velocityNorth: f[4],
                            velocityUp: f[5], speedAccuracy: f[6])))
            default: out.append(.magneticField(try reader.float3()))
            }
        }
        return out // fewer than 4 bytes left over: padding
    }

    /// The GPS positions in one sample at `time` seconds of the video: type 6 with a 2D or 3D fix (its time,
    /// fix and horizontal accuracy kept), and type 5; positions at 0,0 or out of range are left out.
    /// - Throws: as ``packets(in:)``.
    public static func gpsFixes(in sample: [UInt8], time: Double) throws -> [CameraGPSFix] {
        try packets(in: sample).compactMap { packet -> CameraGPSFix? in
            switch packet {
            case .minimalGPS(let latitude, let longitude, let altitude):
                return GPMF.coordinate(latitude, longitude).map {
                    CameraGPSFix(time: time, coordinate: $0, altitude: altitude.isFinite ? altitude : nil)
                }
            case .gps(let g) where g.fixType >= 2:
                let speed = (g.velocityEast * g.velocityEast + g.velocityNorth * g.velocityNorth).squareRoot()
                // Values that are not numbers are left out (a 2D fix's altitude means nothing either).
                let altitude = g.fixType >= 3 && g.altitude.isFinite ? Double(g.altitude) : nil
                return GPMF.coordinate(g.latitude, g.longitude).map {
                    CameraGPSFix(
                        time: time, coordinate: $0, altitude: altitude, speed: speed.isFinite ? Double(speed) : nil,
                        fix: Int(g.fixType), utc: g.utc, horizontalAccuracy: Double(g.horizontalAccuracy))
                }
            default: return nil
            }
        }
    }
}

/// Reads little-endian values from bytes, each read checked against what is left.
struct LittleEndianReader {
    var bytes: ArraySlice<UInt8>
    var remaining: Int { bytes.count }

    mutating func take(_ n: Int) throws -> UInt64 {
        guard bytes.count >= n else { throw LapseError(.invalidInput, "CAMM", "a packet runs past its sample") }
        var v: UInt64 = 0
        for (k, b) in bytes.prefix(n).enumerated() { v |= UInt64(b) << (8 * UInt64(k)) }
        bytes = bytes.dropFirst(n)
        return v
    }
    mutating func uint16() throws -> UInt16 { UInt16(try take(2)) }
    mutating func int32() throws -> Int32 { Int32(truncatingIfNeeded: try take(4)) }
    mutating func float() throws -> Float { Float(bitPattern: UInt32(try take(4))) }
    mutating func double() throws -> Double { Double(bitPattern: try take(8)) }
    mutating func float3() throws -> SIMD3<Float> { SIMD3(try float(), try float(), try float()) }
}
