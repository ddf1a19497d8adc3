// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

// The `--json` summaries, one type per command. Property names are camelCase here and snake_case in the JSON
// (`JSONEncoder.KeyEncodingStrategy.convertToSnakeCase`: `framesSampled` → `frames_sampled`, `firstPTS` →
// `first_pts`), so every command has one key style; an optional is left out when absent, except where marked
// ``Nullable`` (the key is always there, `null` when there is nothing).

// swift-format-ignore: UseSynthesizedInitializer
/// An optional written as `null` when absent (plain optionals leave their key out).
@propertyWrapper
struct Nullable<Value: Encodable>: Encodable {
    var wrappedValue: Value?

    // The containing summaries' memberwise initialisers take a plain optional through this one (the synthesized
    // initialiser would not be used for the wrapper).
    init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

enum SummaryJSON {
    /// `value` as JSON: snake_case keys, sorted, slashes unescaped; indented unless `compact`.
    static func data(_ value: some Encodable, compact: Bool = false) throws -> Data {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting =
            compact
            ? [.sortedKeys, .withoutEscapingSlashes]
            : [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }
}

/// The summaries, by command.
enum Summary {
    /// `{"error": {...}}` under `--json` when a command fails.
    struct ErrorReport: Encodable {
        struct Detail: Encodable {
            var code: String
            var message: String
            var exitStatus: Int
            /// The file or URL the error names; null when it names none (a usage error).
            @Nullable var input: String?
        }
        var error: Detail
    }

    struct Clip: Encodable {
        var output: String
        var start: Double
        var end: Double
        var keyframeTime: Double
        /// Frames a player shows (as the text counts them); those written before the start and hidden by the edit
        /// list are ``hiddenFrames``, those after the end (references of the last frames shown) ``framesPastEnd``.
        var videoFrames: Int
        var hiddenFrames: Int
        var framesPastEnd: Int
        var editList: Bool
        var duration: Double
        var mediaDuration: Double?
        var audio: Bool
        var accurate: Bool
        var container: String
    }

    struct Concat: Encodable {
        var output: String
        var bytes: Int64
        var inputs: [String]
        var frames: Int
        var duration: Double
        var inputDurations: [Double]
        @Nullable var credits: String?
        @Nullable var gif: String?
        @Nullable var gifBytes: Int64?
    }

    struct GIF: Encodable {
        var output: String
        var width: Int
        var height: Int
        var frames: Int
        /// Each frame's delay, centiseconds.
        var delays: [Int]
        var duration: Double
        /// 0 loops forever, null plays once.
        @Nullable var loop: Int?
        var bytes: Int64
        var framesSampled: Int
        var decodeErrors: Int
        var seconds: Double
    }

    struct Hyperlapse: Encodable {
        struct Segment: Encodable {
            var segment: String
            var jobFrames: Int
            var firstFrame: Int
            var frames: Int
            var firstPTS: Int64
            var written: Bool
        }
        struct Jitter: Encodable {
            var median: Double
            var p90: Double
        }
        struct Stabilization: Encodable {
            var pairsMeasured: Int
            var pairsUnmeasured: Int
            var analysisStride: Int
            var stationaryDropped: Int
            var toneMatched: Int
            /// Degrees right of the pictures' centre column.
            @Nullable var travelDirection: Double?
            var travelDirectionGiven: Bool
            var travelElevation: Double?
            var jitterBefore: Jitter?
            var jitterAfter: Jitter?
            /// What the pairs' votes found of a vehicle's axis in the pictures (your photos and videos).
            @Nullable var mountVotes: MountVotes?
            /// Times the camera was found moved on its vehicle.
            var mountBreaks: Int
            /// The view followed the vehicle's axis (found or `--forward`), not the track's bearing.
            var followsVehicleAxis: Bool
        }
        struct MountVotes: Encodable {
            /// Degrees right of the centre column and above the horizon.
            var longitude: Double
            var latitude: Double
            /// Degrees: the votes' half width at half maximum.
            var spread: Double
            var margin: Double
            var consistentShare: Double
            /// Of the latest pairs checked, those whose own votes peak within 10° of it; their median angle from it.
            var agreeing: Int
            var checked: Int
            var deviation: Double
            var pairs: Int
        }
        var output: String
        var bytes: Int64
        @Nullable var gif: String?
        @Nullable var gifBytes: Int64?
        /// Metres.
        var distance: Double
        var routePoints: Int
        var panoramas: Int
        @Nullable var tilesDownloaded: Int?
        @Nullable var tilesFromCache: Int?
        var panoramasAtLowerZoom: Int
        var panoramasUnavailable: Int
        var width: Int
        var height: Int
        var fps: Double
        var frameRate: String
        var duplicatesDropped: Int
        var gaps: Int
        var frames: Int
        var duration: Double
        var credits: String
        var seconds: Double
        var source: String
        /// How many times as fast as the source video the hyperlapse plays (its frame step × fps over the video's
        /// frame rate); null unless the source is a video without a track (with one, frames follow the route).
        @Nullable var speed: Double?
        @Nullable var segment: Segment?
        @Nullable var stabilization: Stabilization?
        /// Why the panoramas were posed from their metadata alone (Street View's: Google's policies); null otherwise.
        @Nullable var posedFromMetadata: String?
        var report: String?
    }

    /// A `--segment K/N` with no frames of the job in it: nothing written.
    struct EmptySegment: Encodable {
        var segment: String
        var jobFrames: Int
        var frames = 0
        var firstFrame: Int
        var written = false
        @Nullable var output: String? = nil
        var seconds: Double
    }

    struct Panoramas: Encodable {
        struct Failure: Encodable {
            var id: String
            var reason: String
        }
        var source: String
        var output: String
        var manifest: String
        var points: Int
        var withImagery: Int
        var withoutImagery: Int
        var uniquePanoramas: Int
        var consecutiveDuplicates: Int
        var written: [String]
        var failed: [Failure]
        var downloaded: Int
        var fromCache: Int
        var placeholderTiles: Int
        var resumed: Int
    }

    struct Preview: Encodable {
        var source: String
        /// Metres.
        var distance: Double
        var routePoints: Int
        var panoramas: Int
        var duplicatesDropped: Int
        var gaps: Int
        var report: String
        var seconds: Double
    }

    struct Route: Encodable {
        var input: String?
        var requests: Int?
        var reportedDistanceM: Double?
        var spacingM: Double?
        var output: String
        var format: String
        var provider: String
        var points: Int
        var distanceM: Double
        var distanceKm: Double
    }

    struct Video: Encodable {
        var output: String
        var width: Int
        var height: Int
        var frames: Int
        var fps: Double
        var frameRate: String
        var duration: Double
        var bytes: Int64
        var images: Int
        var skipped: Int
        var seconds: Double
    }

    struct View: Encodable {
        var output: String
        var width: Int
        var height: Int
        var heading: Double
        var pitch: Double
        var roll: Double
        var fov: Double
        var panoramaWidth: Int
        var panoramaHeight: Int
    }

    /// `lapse view --bench`.
    struct RenderBench: Encodable {
        var frames: Int
        var renderSeconds: Double
        var readSeconds: Double
        var totalSeconds: Double
    }
}
