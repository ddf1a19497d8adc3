// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Cuts a time range out of a local or online video (`lapse clip`): the packets are copied without re-encoding,
/// from the keyframe at or before the start, with an MP4 edit list hiding the frames before it
/// (``LapseMedia/Clipper``); with ``LapseMedia/ClipOptions/accurate`` the video is re-encoded from the exact frame.
public struct ClipJob: Sendable {
    /// A video file, or an http(s) URL (an HLS playlist too).
    public var input: URL
    /// The clip to write: MP4, MOV or Matroska by its extension.
    public var output: URL
    /// The range (seconds), the audio, exactness and how the input is read.
    public var options: ClipOptions
    /// Replace an existing output.
    public var overwrite = false

    /// A cut of `options`' range of `input` (a file or an http(s) URL) into `output` (.mp4, .mov, .m4v or .mkv).
    public init(input: URL, output: URL, options: ClipOptions) {
        self.input = input
        self.output = output
        self.options = options
    }

    /// Cuts the clip, on a thread of its own (reads of an online input wait on the network, off Swift's
    /// concurrency pool), written to a temporary file and renamed into place.
    /// - Parameter progress: receives the copy's progress.
    /// - Returns: what was cut (keyframe, frames, duration, container, warnings).
    /// - Throws: ``LapseError`` `.usage` for a range that is not one or an output extension no container takes;
    ///   `.output` for an output that exists without ``overwrite``; `.invalidInput`, `.network`, `.codec` from
    ///   reading and writing (``LapseMedia/Clipper/clip(_:to:options:overwrite:progress:)``).
    public func run(progress: ProgressHandler? = nil) async throws -> ClipResult {
        _ = try Clipper.container(for: output)
        MediaInput.silenceLibraryLog()
        let job = self
        return try await BlockingQueue(label: "lapse.clip").run {
            try Clipper.clip(
                job.input, to: job.output, options: job.options, overwrite: job.overwrite, progress: progress)
        }
    }
}
