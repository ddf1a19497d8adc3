// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

extension HyperlapseSettings {
    /// Defaults that make a good first video: 10 m spacing, 1280×720, 90° fov, 12 fps, H.264 CRF 20, medium.
    public static let defaults: HyperlapseSettings = {
        var s = HyperlapseSettings()
        s.spacing = 10
        s.size = "1280x720"
        s.fov = 90
        s.fps = 12
        s.zoom = "auto"
        s.crossfade = false
        s.radius = 50
        s.crf = 20
        s.preset = "medium"
        s.provider = "google"
        s.frameStep = 1
        return s
    }()

    /// The job these settings describe (camera, size, outputs), checked.
    /// - Throws: ``LapseError`` `.usage` for missing or contradictory settings, `.invalidInput` for an
    ///   unreadable camera file.
    public func makeJob(overwrite: Bool) throws -> HyperlapseJob {
        let s = HyperlapseSettings.defaults.overridden(by: self)
        guard let output = s.output else { throw LapseError.usage("no output file (-o OUT.mp4)") }
        var job = HyperlapseJob(output: output)
        let parts = (s.size ?? "1280x720").lowercased().split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2, (16...8192).contains(parts[0]), (16...8192).contains(parts[1]) else {
            throw LapseError.usage("size takes WIDTHxHEIGHT such as 1280x720, not '\(s.size ?? "")'")
        }
        job.width = parts[0] & ~1
        job.height = parts[1] & ~1
        job.fps = s.fps ?? 12
        job.crossfade = s.crossfade ?? false
        job.gif = s.gif
        job.gifWidth = s.gifWidth
        job.crf = s.crf ?? 20
        job.preset = s.preset ?? "medium"
        job.overwrite = overwrite
        let camerasGiven = [s.lookAt != nil, s.headingOffset != nil, s.keyframes != nil].filter { $0 }.count
        guard camerasGiven <= 1 else { throw LapseError.usage("give only one of --look-at, --heading-offset and --keyframes") }
        guard let fov = s.fov, fov > 0, fov < 180 else { throw LapseError.usage("the fov must be more than 0 and less than 180 degrees") }
        if let keyframes = s.keyframes {
            job.camera = try CameraScript.read(path: keyframes)
            if self.fov != nil { job.camera.fov = fov }
        } else if let lookAt = s.lookAt {
            job.camera = CameraScript(mode: .lookAt(target: try Coordinate.parse(lookAt), elevation: nil), fov: fov)
        } else {
            job.camera = CameraScript(mode: .route(offset: s.headingOffset ?? 0), fov: fov)
        }
        try job.camera.validate()
        job.settings = s
        return job
    }

    /// The panorama source these settings name.
    /// - Throws: ``LapseError`` `.usage` for a missing or unknown source, or a source that needs a route
    ///   without one; `.invalidInput` for an unreadable video.
    public func makeFeed() throws -> any PanoramaFeed {
        let s = HyperlapseSettings.defaults.overridden(by: self)
        guard let source = s.source else {
            throw LapseError.usage("no panorama source (--source google|panoramax|local:DIR|video:FILE)")
        }
        if source.hasPrefix("video:") {
            let path = String(source.dropFirst("video:".count))
            guard s.track == nil else {
                throw LapseError(.other, path, "a GPS track for a video source is not supported yet")
            }
            return try VideoPanoramaFeed(path: path, frameStep: s.frameStep ?? 1, panoHeading: s.panoHeading ?? 0)
        }
        guard ["google", "panoramax"].contains(source) || source.hasPrefix("local:") else {
            throw LapseError.usage("--source takes google, panoramax, local:DIR or video:FILE, not '\(source)'")
        }
        throw LapseError(.other, source, "this panorama source is not wired into the hyperlapse yet")
    }
}
