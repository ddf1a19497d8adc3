// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// `lapse concat`: joins videos by stream copy (``Concatenator``) — the segments of a hyperlapse
/// (``HyperlapseJob/Segment``) into the whole — merging their credits, and makes the GIF from the joined video.
///
/// Credits: the MP4's `copyright` tag lists every distinct credit of the inputs once (their `; `-separated parts,
/// in order of first appearance); other tags that differ are kept line by line; the inputs' `IN.credits.txt`
/// sidecars, where every input has one, are merged into `OUT.credits.txt` the same way.
public struct ConcatJob: Sendable {
    /// The videos to join, in order (two or more).
    public var inputs: [URL]
    /// The joined video (`.mp4`, `.m4v`, `.mov`, `.mkv`).
    public var output: URL
    /// A GIF of the joined video as well, nil for none.
    public var gif: URL?
    /// The GIF's width in pixels (height from the aspect ratio); default a third of the video's, as a
    /// hyperlapse's GIF.
    public var gifWidth: Int?
    /// Replace outputs that exist (else an existing output is an `.output` error).
    public var overwrite = false

    /// A join of `inputs` (at least two videos, in order) into `output`.
    public init(inputs: [URL], output: URL) {
        self.inputs = inputs
        self.output = output
    }

    /// What the job made. Encoded as `lapse concat --json` prints it: output, bytes, inputs, frames, duration,
    /// inputDurations, credits, gif and gifBytes (`null` when none).
    public struct Summary: Sendable, Encodable {
        /// The joined video.
        public var output: URL
        /// The videos joined, in order.
        public var inputs: [URL]
        /// The joined video's size in bytes.
        public var bytes: Int64
        /// Video frames in the joined video.
        public var frames: Int
        /// The joined video's duration, seconds.
        public var duration: Double
        /// Each input's duration, seconds, in order.
        public var inputDurations: [Double]
        /// `OUT.credits.txt`, when the inputs had sidecars to merge.
        public var credits: URL?
        /// The GIF made of the joined video, when one was asked for.
        public var gif: GIFSummary?

        /// See the type's documentation for the keys.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: SummaryKey.self)
            try c.encode(output.shown, forKey: "output")
            try c.encode(bytes, forKey: "bytes")
            try c.encode(inputs.map(\.shown), forKey: "inputs")
            try c.encode(frames, forKey: "frames")
            try c.encode(duration, forKey: "duration")
            try c.encode(inputDurations, forKey: "inputDurations")
            try c.encodeNullable(credits?.shown, forKey: "credits")
            try c.encodeNullable(gif?.url.shown, forKey: "gif")
            try c.encodeNullable(gif?.bytes, forKey: "gifBytes")
        }
    }

    /// Runs the job.
    /// - Throws: ``LapseError``: `.usage` (fewer than two inputs, a GIF path not ending in `.gif`), `.output`
    ///   (an output exists without ``overwrite``, or cannot be written), `.invalidInput` naming the input that
    ///   cannot be read or joined (see ``Concatenator/concat(_:to:metadata:overwrite:progress:)``). When the join
    ///   fails nothing is left at the outputs; when only the GIF fails, the joined video and credits stay.
    public func run(progress: ProgressHandler? = nil, warning: WarningHandler? = nil) async throws -> Summary {
        if let gif, gif.lowercasedExtension != "gif" {
            throw LapseError.usage("\(gif.shown): the GIF output must end in .gif")
        }
        let creditsPath = output.replacingExtension(with: ".credits.txt")
        let sidecars = inputs.map { $0.replacingExtension(with: ".credits.txt") }
        // Only files have sidecars: an online input has none, and then nothing is merged.
        let mergedCredits =
            try inputs.allSatisfy(\.isFileURL)
            && sidecars.allSatisfy { FileManager.default.fileExists(atPath: $0.path) }
            ? Self.mergedLines(sidecars.map { try String(contentsOf: $0, encoding: .utf8) }) : nil
        // Every output is checked before anything is written.
        let credits = try mergedCredits.map { _ in
            try AtomicOutput(url: creditsPath, overwrite: overwrite, inputs: inputs + sidecars)
        }
        defer { credits?.discard() }
        if let gif { try AtomicOutput(url: gif, overwrite: overwrite, inputs: inputs).discard() }
        try AtomicOutput(url: output, overwrite: overwrite, inputs: inputs).discard()

        let metadata = try Self.mergedMetadata(Concatenator.metadata(of: inputs))
        let result = try Concatenator.concat(
            inputs, to: output, metadata: metadata, overwrite: overwrite, progress: progress)
        if let credits, let mergedCredits {
            try credits.write(Data(mergedCredits.utf8))
            try credits.commit()
        }
        var gifSummary: GIFSummary?
        if let gif {
            let reader = try VideoFrameReader(output)
            var job = GIFJob(source: .video(output), output: gif)
            let rate = reader.frameRateFraction ?? FrameRate(12)
            job.frameRate = rate.value > 50 ? FrameRate(50) : rate
            if let gifWidth, gifWidth > reader.displayWidth {
                warning?(
                    """
                    the GIF width asked for (\(gifWidth)) is more than the video's: the GIF is \
                    \(reader.displayWidth) wide
                    """
                )
            }
            job.size = .width(max(2, min(reader.displayWidth, gifWidth ?? reader.displayWidth / 3)))
            job.overwrite = overwrite
            gifSummary = try await job.run(progress: progress, warning: warning).gif
        }
        let bytes =
            (try? FileManager.default.attributesOfItem(atPath: output.path)[.size] as? NSNumber)?.int64Value ?? 0
        return Summary(
            output: output, inputs: inputs, bytes: bytes, frames: result.videoFrames, duration: result.duration,
            inputDurations: result.inputDurations, credits: mergedCredits.map { _ in creditsPath }, gif: gifSummary)
    }

    /// One set of container tags from the inputs': a tag equal in all is kept; `copyright` lists each distinct
    /// `; `-separated part once, in order; other tags list each distinct value once, a line each.
    static func mergedMetadata(_ all: [[String: String]]) -> [String: String] {
        var keys: [String] = []
        for tags in all { for key in tags.keys.sorted() where !keys.contains(key) { keys.append(key) } }
        var result: [String: String] = [:]
        for key in keys {
            let values = all.compactMap { $0[key] }
            let separator = key == "copyright" ? "; " : "\n"
            var parts: [String] = []
            for value in values {
                for part in (key == "copyright" ? value.components(separatedBy: "; ") : [value])
                where !parts.contains(part) {
                    parts.append(part)
                }
            }
            result[key] = parts.joined(separator: separator)
        }
        return result
    }

    /// The credits sidecars of the inputs as one: the first's heading lines, then each distinct credit line
    /// ("- …") once in order of first appearance, then each distinct closing line once (route credit, licence,
    /// "Made with lapse").
    static func mergedLines(_ texts: [String]) -> String {
        var heading: [String] = []
        var credits: [String] = []
        var closing: [String] = []
        for (n, text) in texts.enumerated() {
            let lines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
            let firstCredit = lines.firstIndex { $0.hasPrefix("- ") } ?? lines.count
            if n == 0 { heading = Array(lines[..<firstCredit]) }
            for line in lines[firstCredit...] {
                if line.hasPrefix("- ") {
                    if !credits.contains(line) { credits.append(line) }
                } else if !closing.contains(line) && !heading.contains(line) {
                    closing.append(line)
                }
            }
        }
        return (heading + credits + closing).joined(separator: "\n") + "\n"
    }
}
