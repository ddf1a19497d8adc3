// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit

// The `--json` summaries. A job's summary encodes itself (LapseKit's `Summary` types: `VideoJob.Summary`,
// `HyperlapseJob.Summary`, `ClipResult`, …); ``CommandSummary`` adds what the command measured. The few commands
// without a job in the library (route, view) have theirs here. Property names are camelCase and snake_case in the
// JSON (`JSONEncoder.KeyEncodingStrategy.convertToSnakeCase`: `framesSampled` → `frames_sampled`, `firstPTS` →
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

/// A job's summary as `--json` prints it: the summary's own keys, then what the command adds: its wall time
/// (`seconds`) and the report page it wrote (`report`), each left out when not given.
struct CommandSummary<Base: Encodable>: Encodable {
    var base: Base
    var seconds: Double?
    var report: String?

    init(_ base: Base, seconds: Double? = nil, report: String? = nil) {
        self.base = base
        self.seconds = seconds
        self.report = report
    }

    func encode(to encoder: any Encoder) throws {
        try base.encode(to: encoder)
        var c = encoder.container(keyedBy: SummaryKey.self)
        try c.encodeIfPresent(seconds, forKey: "seconds")
        try c.encodeIfPresent(report, forKey: "report")
    }
}

/// A summary with the warnings the command gave (`warnings`, as stderr showed them, without `warning: `), for
/// scripts that read `--json` only, and for the report page's table; the key is left out when there were none.
struct WarnedSummary<Base: Encodable>: Encodable {
    var base: Base
    var warnings: [String]

    func encode(to encoder: any Encoder) throws {
        try base.encode(to: encoder)
        guard !warnings.isEmpty else { return }
        var c = encoder.container(keyedBy: SummaryKey.self)
        try c.encode(warnings, forKey: "warnings")
    }
}

/// The summaries of the commands without a job type, and the error object.
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
