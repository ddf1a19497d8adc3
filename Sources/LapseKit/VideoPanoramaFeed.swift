// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Frames of an equirectangular 360° video as a hyperlapse's panoramas.
///
/// Without a track the video has no positions: every `frameStep`-th frame becomes a stop, the road is taken to
/// run the way the video's centre column faces (`panoHeading`, compass degrees), and "distance along the route"
/// counts frames — so keyframes by frame number work as expected.
public final class VideoPanoramaFeed: PanoramaFeed, @unchecked Sendable {
    // @unchecked: the reader is only used inside `decoder`'s lock.
    public let path: String
    public let frameStep: Int
    public let panoHeading: Double
    public var name: String { "video \((path as NSString).lastPathComponent)" }
    let decoder: SequentialDecoder
    /// A second pass over the video, decoded straight to the analysis size (it runs ahead of the render's).
    private let analysisDecoder: SequentialDecoder
    /// Presentation times of the video's frames, seconds.
    private let times: [Double]
    public var pointCount: Int { (times.count + frameStep - 1) / frameStep }
    public var distance: Double { 0 }
    public var pointUnit: String { "video frames" }
    public var lookupWindow: Int { 100 }
    public var followsCamera: Bool { true }
    public var positionsKnown: Bool { false }
    public var continuousCapture: Bool { true }
    /// Frames at least a tenth of a second apart are analysed (every third of a 30 fps video at a frame step of 1).
    public let analysisStride: Int

    /// - Parameters:
    ///   - path: the video file (or URL).
    ///   - frameStep: use every N-th frame, ≥ 1.
    ///   - panoHeading: compass heading of the video's centre column, degrees.
    /// - Throws: ``LapseError`` `.invalidInput` when the video cannot be opened or is not 2:1.
    public init(path: String, frameStep: Int = 1, panoHeading: Double = 0) throws {
        self.path = path
        self.frameStep = max(1, frameStep)
        self.panoHeading = panoHeading
        let reader = try VideoFrameReader(path)
        guard reader.displayWidth == 2 * reader.displayHeight else {
            throw LapseError(.invalidInput, path, "not an equirectangular 360° video (\(reader.displayWidth)x\(reader.displayHeight) is not 2:1)")
        }
        decoder = SequentialDecoder(reader, yuv: reader.yuvFramesAvailable, wanted: { [step = self.frameStep] in $0 % step == 0 })
        let small = try VideoFrameReader(path)
        small.outputSize = (SphereImage.standardWidth, SphereImage.standardWidth / 2)
        let stride = max(1, Int(((reader.frameRate ?? 30) / Double(self.frameStep) / 10).rounded()))
        analysisStride = stride
        analysisDecoder = SequentialDecoder(small, yuv: false, wanted: { [step = self.frameStep] in $0 % (step * stride) == 0 })
        times = try decoder.frameTimes()
    }

    /// Stop `n` is frame `n · frameStep`, at "distance" n along a road that runs the way the video's centre faces.
    public func lookup(_ range: Range<Int>) async throws -> [HyperlapseStop?] {
        let origin = Coordinate(uncheckedLatitude: 0, longitude: 0)
        let attribution = Attribution(source: (path as NSString).lastPathComponent)
        return range.map { n in
            let point = RoutePoint(coordinate: origin, distanceAlongRoute: Double(n), heading: normalizeDegrees(panoHeading))
            // The frame number makes the id unique (two frames may share a timestamp; stops with equal ids are dropped).
            return HyperlapseStop(panoramaID: String(format: "frame %d (t=%.3f)", n * frameStep, times[n * frameStep]), routePoint: point,
                                  pose: PanoramaPose(heading: panoHeading), attribution: attribution)
        }
    }

    /// The frame of the stop (stops must be asked for in increasing order, a few at a time: the video is
    /// decoded front to back once). `region` is ignored: frames come whole.
    public func image(for stop: HyperlapseStop, region: PanoramaRegion?) async throws -> PixelBuffer {
        try decoder.frame(number: Int(stop.routePoint.distanceAlongRoute) * frameStep).rgba()
    }

    /// Whether the render's frames are decoded to Y′CbCr as they are (a BT.709 4:2:0 video).
    public var yuvImages: Bool { decoder.yuv }

    public func yuvImage(for stop: HyperlapseStop) async throws -> YUVFrame {
        switch try decoder.frame(number: Int(stop.routePoint.distanceAlongRoute) * frameStep) {
        case .yuv(let picture): return picture
        case .rgba: throw LapseError(.other, name, "frames are decoded as RGBA")
        }
    }

    /// A segment renders from this stop on: the render's decoder starts at the keyframe before its frame, and
    /// the frames before that are not decoded at all.
    public func startRendering(at stop: HyperlapseStop) {
        decoder.start(at: Int(stop.routePoint.distanceAlongRoute) * frameStep)
    }

    /// A frame the stabiliser dropped is not kept by the render's decoder.
    public func skip(_ stop: HyperlapseStop) {
        decoder.discard(number: Int(stop.routePoint.distanceAlongRoute) * frameStep)
    }

    public func analysisImage(for stop: HyperlapseStop) async throws -> PixelBuffer {
        try analysisDecoder.frame(number: Int(stop.routePoint.distanceAlongRoute) * frameStep).rgba()
    }
}

/// Decodes a video front to back once, handing out frames by number; frames asked for out of order are kept
/// until taken (at most the pipeline's concurrency of them).
final class SequentialDecoder: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private let reader: VideoFrameReader
    private var decoded = 0
    /// Frames decoded so far (fewer than the frame numbers reached after ``start(at:)``).
    private(set) var framesDecoded = 0
    private var times: [Double]?
    private var waiting: [Int: Picture] = [:]
    /// Frames come as Y′CbCr as decoded (``VideoFrameReader/nextYUVFrame()``) rather than RGBA.
    let yuv: Bool

    enum Picture {
        case rgba(PixelBuffer)
        case yuv(YUVFrame)

        /// As RGBA (converted when decoded as Y′CbCr).
        func rgba() throws -> PixelBuffer {
            switch self {
            case .rgba(let pixels): return pixels
            case .yuv(let picture): return try picture.rgba()
            }
        }
    }
    /// Frames that will not be asked for after all.
    private var discarded = Set<Int>()
    private let wanted: @Sendable (Int) -> Bool

    /// - Parameter wanted: which frame numbers will be asked for (the others are decoded and dropped).
    init(_ reader: VideoFrameReader, yuv: Bool, wanted: @escaping @Sendable (Int) -> Bool) {
        self.reader = reader
        self.yuv = yuv
        self.wanted = wanted
    }

    /// Presentation times of every frame: from the packets' timestamps (a pass over the file that decodes
    /// nothing), else, for a stream without them, from a decode of every frame.
    func frameTimes() throws -> [Double] {
        lock.lock(); defer { lock.unlock() }
        if let times { return times }
        var result = try VideoFrameReader(readerName).frameTimesFromPackets() ?? []
        if result.isEmpty {
            let probe = try VideoFrameReader(readerName)
            probe.outputSize = (2, 1)
            while let t = try probe.skipFrame() { result.append(t) }
        }
        guard !result.isEmpty else { throw LapseError(.invalidInput, readerName, "no decodable frame") }
        times = result
        return result
    }

    private var readerName: String { reader.name }

    /// Starts decoding at the keyframe at or before frame `number` rather than at the first frame (a hyperlapse's
    /// segment that begins later), so the frames before that keyframe are not decoded. Nothing changes once a
    /// frame was decoded, nor when where the seek lands cannot be told (the video is then read from its start).
    func start(at number: Int) {
        lock.lock(); defer { lock.unlock() }
        guard decoded == 0, waiting.isEmpty, number > 0, let times, number < times.count else { return }
        // A seek lands on the keyframe at or before its time (a tenth of a millisecond past the frame's, so that
        // rounding cannot take it one keyframe back); which frame that is, a reader of its own finds out first.
        let target = times[number] + 1e-4
        guard let probe = try? VideoFrameReader(readerName), (try? probe.seek(to: target)) != nil,
              let landed = try? probe.skipFrame(),
              let k = times.firstIndex(where: { abs($0 - landed) < 1e-6 }), k <= number else { return }
        do {
            try reader.seek(to: target)
            decoded = k
        } catch {
            // The decoder's position is unknown now: start again from the first frame.
            if (try? reader.seek(to: 0)) == nil { return }
        }
    }

    /// Frame `number` will not be asked for: it is not kept (nor converted, when not decoded yet).
    func discard(number: Int) {
        lock.lock(); defer { lock.unlock() }
        if waiting.removeValue(forKey: number) == nil, number >= decoded { discarded.insert(number) }
    }

    func frame(number: Int) throws -> Picture {
        lock.lock(); defer { lock.unlock() }
        if let p = waiting.removeValue(forKey: number) { return p }
        while decoded <= number {
            // Frames that will not be asked for are decoded (the codec needs them) but not converted.
            guard decoded == number || (wanted(decoded) && !discarded.contains(decoded)) else {
                discarded.remove(decoded)
                guard try reader.skipFrame() != nil else {
                    throw LapseError(.invalidInput, reader.name, "frame \(number) is past the end of the video")
                }
                decoded += 1
                framesDecoded += 1
                continue
            }
            let next: Picture? = yuv ? try reader.nextYUVFrame().map { .yuv($0.frame) } : try reader.nextFrame().map { .rgba($0.pixels) }
            guard let pixels = next else {
                throw LapseError(.invalidInput, reader.name, "frame \(number) is past the end of the video")
            }
            framesDecoded += 1
            if decoded == number {
                decoded += 1
                return pixels
            }
            waiting[decoded] = pixels   // asked for by a task that is running behind
            decoded += 1
        }
        throw LapseError(.other, reader.name, "frame \(number) was asked for twice")
    }
}
