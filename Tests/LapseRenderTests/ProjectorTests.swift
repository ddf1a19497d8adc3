// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseMedia
import Testing

@testable import LapseRender

@Suite("Projector geometry on synthetic panoramas")
struct ProjectorGeometryTests {
    /// Coloured markers at known compass headings and elevations on a grey panorama.
    struct Marker {
        var heading: Double
        var elevation: Double
        var colour: RGBA
    }
    static let markers: [Marker] = [
        Marker(heading: 0, elevation: 0, colour: RGBA(255, 0, 0)),
        Marker(heading: 30, elevation: 10, colour: RGBA(0, 255, 0)),
        Marker(heading: -35, elevation: -15, colour: RGBA(0, 0, 255)),
        Marker(heading: 90, elevation: 25, colour: RGBA(255, 255, 0)),
        Marker(heading: 180, elevation: -5, colour: RGBA(255, 0, 255)),
        Marker(heading: 200, elevation: 40, colour: RGBA(0, 255, 255)),
        Marker(heading: 270, elevation: -30, colour: RGBA(255, 255, 255)),
        Marker(heading: 355, elevation: 55, colour: RGBA(255, 128, 0)),
        Marker(heading: 120, elevation: -60, colour: RGBA(128, 0, 255))
    ]

    /// The panorama, taken by a camera whose centre column faces `heading`: each marker a small disc of directions
    /// within 0.9° of its centre (round on the sphere, so its centroid in any view is its centre's projection).
    static func markerPanorama(heading: Double) -> PixelBuffer {
        let centres = markers.map { direction(heading: $0.heading, elevation: $0.elevation) }
        let radius = cos(rad(0.9))
        return makePanorama(width: 2048, height: 1024, heading: heading) { w in
            for (m, c) in zip(markers, centres) where dot(w, c) > radius { return m.colour }
            return RGBA(90, 90, 90)
        }
    }
    static let panorama = markerPanorama(heading: 0)
    static let turnedPanorama = markerPanorama(heading: 123)

    /// Centroid of the pixels close to `colour`, weighted by closeness; nil when none.
    static func centroid(of colour: RGBA, in image: PixelBuffer) -> (x: Double, y: Double, count: Int)? {
        var sx = 0.0
        var sy = 0.0
        var sw = 0.0
        var n = 0
        let grey = RGBA(90, 90, 90)
        func dist(_ a: RGBA, _ b: RGBA) -> Double {
            let d = [Double(a.r) - Double(b.r), Double(a.g) - Double(b.g), Double(a.b) - Double(b.b)]
            return (d.map { $0 * $0 }.reduce(0, +)).squareRoot()
        }
        let full = dist(colour, grey)
        for y in 0..<image.height {
            for x in 0..<image.width {
                let p = image[x, y]
                // Share of the marker colour in a blend of marker and grey.
                let share = 1 - dist(p, colour) / full
                guard share > 0.5 else { continue }
                sx += Double(x) * share
                sy += Double(y) * share
                sw += share
                n += 1
            }
        }
        return sw > 0 ? (sx / sw, sy / sw, n) : nil
    }

    struct ViewCase: CustomStringConvertible, Sendable {
        var heading: Double, pitch: Double, roll: Double, fov: Double, width: Int, height: Int
        var description: String { "heading \(heading) pitch \(pitch) roll \(roll) fov \(fov) \(width)x\(height)" }
    }
    static let views: [ViewCase] = [
        ViewCase(heading: 0, pitch: 0, roll: 0, fov: 90, width: 640, height: 360),
        ViewCase(heading: 15, pitch: 5, roll: 0, fov: 60, width: 480, height: 360),
        ViewCase(heading: 345, pitch: -10, roll: 0, fov: 100, width: 640, height: 360),
        ViewCase(heading: 90, pitch: 20, roll: 0, fov: 75, width: 400, height: 400),
        ViewCase(heading: 185, pitch: 15, roll: 20, fov: 90, width: 640, height: 480),
        ViewCase(heading: 250, pitch: -25, roll: -30, fov: 120, width: 800, height: 450),
        ViewCase(heading: 20, pitch: 45, roll: 10, fov: 110, width: 640, height: 360),
        ViewCase(heading: 120, pitch: -70, roll: 0, fov: 90, width: 480, height: 480),
        ViewCase(heading: -30, pitch: 0, roll: 45, fov: 90, width: 500, height: 300),
        ViewCase(heading: 720 + 10, pitch: 0, roll: 0, fov: 30, width: 320, height: 240)
    ]

    @Test("markers land on the predicted pixel ±1 px", arguments: views)
    func markersLandWherePredicted(view: ViewCase) throws {
        let projector = try Projector(width: view.width, height: view.height)
        for (pose, panorama) in [
            (PanoramaPose(heading: 0), Self.panorama), (PanoramaPose(heading: 123), Self.turnedPanorama)
        ] {
            let out = try projector.render(
                panorama, pose: pose,
                camera: CameraPose(heading: view.heading, pitch: view.pitch, roll: view.roll, fov: view.fov))
            let camera = Basis(heading: view.heading, pitch: view.pitch, roll: view.roll)
            var checked = 0
            for m in Self.markers {
                let w = direction(heading: m.heading, elevation: m.elevation) // markers are fixed in the world
                guard
                    let p = predictedPixel(
                        of: w, camera: camera, fov: view.fov, width: view.width, height: view.height),
                    p.x > 8, p.y > 8, p.x < Double(view.width) - 9, p.y < Double(view.height) - 9
                else {
                    // Out of view: the colour must not show up anywhere either (unless it is near an edge).
                    continue
                }
                let centroid = Self.centroid(of: m.colour, in: out)
                let found = try #require(centroid, "marker \(m.colour) missing in \(view)")
                #expect(
                    abs(found.x - p.x) <= 1 && abs(found.y - p.y) <= 1,
                    """
                    marker \(m.colour) at (\(found.x), \(found.y)), predicted (\(p.x), \(p.y)) in \(view), pano \
                    heading \(pose.heading)
                    """
                )
                checked += 1
            }
            #expect(checked >= 1, "no marker in view for \(view)")
        }
    }

    @Test("left stays left: a marker west of the view centre appears left of the image centre")
    func notMirrored() throws {
        let projector = try Projector(width: 640, height: 360)
        let out = try projector.render(Self.panorama, camera: CameraPose(heading: 0, pitch: 0, fov: 120))
        let westFound = Self.centroid(of: RGBA(0, 0, 255), in: out)
        let eastFound = Self.centroid(of: RGBA(0, 255, 0), in: out)
        let west = try #require(westFound) // heading −35, 15° down
        let east = try #require(eastFound) // heading 30, 10° up
        #expect(west.x < 320 && east.x > 320)
        #expect(east.y < 180 && west.y > 180) // up is up
        // Turning the camera right (east) moves the scene left.
        let turned = try projector.render(Self.panorama, camera: CameraPose(heading: 20, pitch: 0, fov: 120))
        let westAfterFound = Self.centroid(of: RGBA(0, 0, 255), in: turned)
        let westAfter = try #require(westAfterFound)
        #expect(westAfter.x < west.x - 20)
    }

    @Test("a view straight at a marker centres it, for any panorama heading")
    func panoramaHeading() throws {
        let projector = try Projector(width: 320, height: 320)
        let out = try projector.render(
            Self.turnedPanorama, pose: PanoramaPose(heading: 123),
            camera: CameraPose(heading: 90, pitch: 25, fov: 40)) // the yellow marker
        let found = Self.centroid(of: RGBA(255, 255, 0), in: out)
        let c = try #require(found)
        #expect(abs(c.x - 159.5) <= 1 && abs(c.y - 159.5) <= 1)
    }
}

@Suite("Projector sampling on a smooth spherical texture")
struct ProjectorTextureTests {
    /// Renders and compares every pixel with the analytic colour of its ray; returns the largest difference.
    static func maxError(
        panorama: PixelBuffer, pose: PanoramaPose, camera: CameraPose, width: Int, height: Int,
        interpolation: Interpolation = .bilinear
    ) throws -> (max: Int, out: PixelBuffer) {
        let projector = try Projector(width: width, height: height, interpolation: interpolation)
        let out = try projector.render(panorama, pose: pose, camera: camera)
        let basis = Basis(heading: camera.heading, pitch: camera.pitch, roll: camera.roll)
        var worst = 0
        for j in 0..<height {
            for i in 0..<width {
                let want = directionColour(
                    rayDirection(i: i, j: j, camera: basis, fov: camera.fov, width: width, height: height))
                let got = out[i, j]
                worst = max(
                    worst, abs(Int(got.r) - Int(want.r)), abs(Int(got.g) - Int(want.g)), abs(Int(got.b) - Int(want.b)))
                #expect(got.a == 255)
            }
        }
        return (worst, out)
    }

    static let level = makePanorama(width: 1024, height: 512, colour: directionColour)
    /// The same world, photographed facing south: its first and last columns face north (0°).
    static let facingSouth = makePanorama(width: 1024, height: 512, heading: 180, colour: directionColour)

    @Test(
        "crossing the 0°/360° seam: headings 359°, 0°, 1° match the analytic colours, no seam line",
        arguments: [359.0, 0, 1, 179.5, 180, 180.5])
    func seam(heading: Double) throws {
        // The seam (first/last column) faces north, so headings near 0° look across it; near 180° is its middle.
        let (worst, out) = try Self.maxError(
            panorama: Self.facingSouth, pose: PanoramaPose(heading: 180),
            camera: CameraPose(heading: heading, pitch: 10, fov: 90), width: 320, height: 180)
        #expect(worst <= 3, "largest colour error \(worst)")
        // No column stands out from its neighbours.
        var columnSteps: [Double] = []
        for x in 1..<out.width {
            var s = 0.0
            for y in 0..<out.height { s += Double(abs(Int(out[x, y].r) - Int(out[x - 1, y].r))) }
            columnSteps.append(s / Double(out.height))
        }
        let sorted = columnSteps.sorted()
        #expect(sorted.last! <= sorted[sorted.count / 2] + 1.5)
    }

    @Test(
        "pitch ±90° and views through the poles render with no black pixels and the right colours",
        arguments: [(90.0, 0.0), (-90, 0), (90, 37), (-90, 211), (75, 0), (-80, 130)])
    func poles(pitch: Double, heading: Double) throws {
        let (worst, out) = try Self.maxError(
            panorama: Self.level, pose: PanoramaPose(),
            camera: CameraPose(heading: heading, pitch: pitch, fov: 100), width: 256, height: 256)
        #expect(worst <= 3, "largest colour error \(worst)")
        for y in 0..<out.height {
            for x in 0..<out.width {
                let p = out[x, y]
                #expect(Int(p.r) + Int(p.g) + Int(p.b) > 30) // the texture has no black anywhere
            }
        }
    }

    @Test(
        "the panorama's own tilt and roll are corrected",
        arguments: [(17.0, 0.0, 0.0), (0, 8, 0), (0, 0, -6), (250, -4, 3)])
    func panoramaPose(heading: Double, tilt: Double, roll: Double) throws {
        let pano = makePanorama(
            width: 1024, height: 512, heading: heading, tilt: tilt, roll: roll, colour: directionColour)
        for camera in [
            CameraPose(heading: 10, pitch: 0, fov: 90), CameraPose(heading: 200, pitch: 30, roll: 10, fov: 70)
        ] {
            let (worst, _) = try Self.maxError(
                panorama: pano, pose: PanoramaPose(heading: heading, tilt: tilt, roll: roll),
                camera: camera, width: 240, height: 160)
            #expect(worst <= 3, "largest colour error \(worst) for \(camera)")
        }
    }

    @Test("bicubic and Lanczos sample the same geometry", arguments: [Interpolation.bicubic, .lanczos])
    func wideKernels(interpolation: Interpolation) throws {
        for camera in [CameraPose(heading: 179, pitch: 5, fov: 80), CameraPose(heading: 0, pitch: 90, fov: 90)] {
            let (worst, _) = try Self.maxError(
                panorama: Self.level, pose: PanoramaPose(heading: 0), camera: camera,
                width: 200, height: 150, interpolation: interpolation)
            #expect(worst <= 3, "largest colour error \(worst)")
        }
    }

    /// The footprint names every cell the render reads: with every other cell filled with garbage the view is
    /// identical; and it leaves cells out (a 90° view reads about a quarter of the sphere).
    @Test("footprint: cells outside it are never read", arguments: Interpolation.allCases)
    func footprint(interpolation: Interpolation) throws {
        let projector = try Projector(width: 160, height: 90, interpolation: interpolation)
        let panorama = Self.level
        let cell = 64 // 16 x 8 cells of 64 px on the 1024 x 512 panorama
        let cameras = [
            CameraPose(heading: 0, pitch: 0, fov: 90), CameraPose(heading: 181, pitch: -20, fov: 100),
            CameraPose(heading: 359.9, pitch: 5, fov: 60), CameraPose(heading: 10, pitch: 88, fov: 90)
        ]
        for (k, camera) in cameras.enumerated() {
            let pose = PanoramaPose(heading: k == 1 ? 30 : 0, tilt: k == 2 ? 3 : 0)
            let cells = try projector.footprint(
                sourceWidth: panorama.width, sourceHeight: panorama.height, pose: pose,
                camera: camera, cellWidth: cell, cellHeight: cell)
            #expect(cells.count == 16 * 8)
            var scrambled = panorama
            for y in 0..<panorama.height {
                for x in 0..<panorama.width where !cells[(y / cell) * 16 + x / cell] {
                    scrambled[x, y] = RGBA(UInt8(x * 7 & 255), UInt8(y * 13 & 255), 255, 255)
                }
            }
            let expected = try projector.render(panorama, pose: pose, camera: camera)
            #expect(try projector.render(scrambled, pose: pose, camera: camera) == expected, "camera \(k)")
            let used = cells.filter { $0 }.count
            if k == 3 {
                #expect(cells[0..<16].allSatisfy { $0 }, "looking at the zenith reads the whole top row")
            } else {
                #expect(used < cells.count / 2, "camera \(k): \(used) of \(cells.count) cells")
            }
        }
    }

    /// The Y′CbCr footprint names every cell the plane-by-plane render reads, chroma taps included: with every
    /// other cell's luma and chroma garbage the view is identical, at even and odd view sizes and a seam-crossing,
    /// tilted, polar view, down to cells of 2 × 2 pixels (there the luma taps alone leave out chroma samples read);
    /// and it is no wider than needed (a 90° view reads under half the cells).
    @Test(
        "Y′CbCr footprint: cells outside it are never read", arguments: [(160, 90, 64), (161, 91, 64), (161, 91, 2)])
    func yuvFootprint(width: Int, height: Int, cell: Int) throws {
        let projector = try Projector(width: width, height: height)
        let panorama = try YUVFrame(rgba: Self.level)
        let columns = panorama.width / cell
        let cameras = [
            CameraPose(heading: 0, pitch: 0, fov: 90), CameraPose(heading: 181, pitch: -20, fov: 100),
            CameraPose(heading: 359.9, pitch: 5, fov: 60), CameraPose(heading: 10, pitch: 88, fov: 90)
        ]
        for (k, camera) in cameras.enumerated() {
            let pose = PanoramaPose(heading: k == 1 ? 30 : 0, tilt: k == 2 ? 3 : 0)
            let cells = try projector.yuvFootprint(
                sourceWidth: panorama.width, sourceHeight: panorama.height, pose: pose, camera: camera,
                cellWidth: cell, cellHeight: cell)
            #expect(cells.count == columns * panorama.height / cell)
            var scrambled = panorama
            for y in 0..<panorama.height {
                for x in 0..<panorama.width where !cells[(y / cell) * columns + x / cell] {
                    scrambled.y[y * panorama.width + x] = UInt8(x * 7 & 255)
                }
            }
            let cw = panorama.chromaWidth
            for y in 0..<panorama.chromaHeight {
                for x in 0..<cw where !cells[(y / (cell / 2)) * columns + x / (cell / 2)] {
                    scrambled.cb[y * cw + x] = UInt8(y * 13 & 255)
                    scrambled.cr[y * cw + x] = 255
                }
            }
            let expected = try projector.render(panorama, pose: pose, camera: camera)
            #expect(try projector.render(scrambled, pose: pose, camera: camera) == expected, "camera \(k)")
            if k != 3 { #expect(cells.filter { $0 }.count < cells.count / 2, "camera \(k)") }
        }
        #expect(throws: LapseError.self) {
            try projector.yuvFootprint(
                sourceWidth: 1024, sourceHeight: 512, camera: CameraPose(heading: 0), cellWidth: 63, cellHeight: 64)
        }
    }

    @Test("a heading change alone reuses the table; other changes build a new one")
    func tableReuse() throws {
        let projector = try Projector(width: 64, height: 48)
        let (t1, s1) = try projector.table(
            sourceWidth: 1024, sourceHeight: 512, pose: PanoramaPose(heading: 3), camera: CameraPose(heading: 10))
        let (t2, s2) = try projector.table(
            sourceWidth: 1024, sourceHeight: 512, pose: PanoramaPose(heading: 50), camera: CameraPose(heading: 300))
        #expect(t1 === t2 && s1 != s2)
        let (t3, _) = try projector.table(
            sourceWidth: 1024, sourceHeight: 512, pose: PanoramaPose(), camera: CameraPose(heading: 0, pitch: 1))
        #expect(t3 !== t1)
        let (t4, s4) = try projector.table(
            sourceWidth: 1024, sourceHeight: 512, pose: PanoramaPose(tilt: 2), camera: CameraPose(heading: 0))
        #expect(t4 !== t1 && s4 == 0)
    }

    /// The table interpolated on its 8-pixel grid against the one computed pixel by pixel, over views that cross
    /// the seam, look at the poles, roll, tilt the panorama, span 10°–175°, at even, odd and tiny sizes, on
    /// panoramas up to the largest allowed: every pixel samples within 1/32 of a pixel of the exact position, as
    /// an angle on the sphere (a longitude error counts times the cosine of the latitude) and in pixels of the
    /// source or the view at its centre, whichever is coarser.
    @Test("the grid-interpolated table is the exact one to 1/32 px")
    func gridTableIsExact() throws {
        var seed: UInt64 = 5
        func random(_ r: Double) -> Double {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return (Double(seed >> 11) / Double(1 << 53) * 2 - 1) * r
        }
        var keys: [ProjectionTableKey] = []
        let sizes = [(1280, 720), (321, 179), (17, 17), (40, 23), (1920, 1080)]
        let sources = [(2048, 1024), (513, 256), (32768, 16384), (100, 50)]
        for k in 0..<40 {
            let (ow, oh) = sizes[k % sizes.count]
            let (sw, sh) = sources[k % sources.count]
            let pitch = k % 8 == 0 ? [90.0, -90, 80, -85, 45][k / 8] : random(30)
            keys.append(
                ProjectionTableKey(
                    outputWidth: ow, outputHeight: oh, sourceWidth: sw, sourceHeight: sh,
                    fov: [90.0, 10, 120, 175, 60][k % 5], pitch: pitch, roll: random(20),
                    bakedYaw: [180.0, 179.9, 0, random(180)][k % 4], panoramaTilt: random(10),
                    panoramaRoll: random(10)))
        }
        var worst = 0.0
        for key in keys {
            let grid = ProjectionTable(key: key)
            let exact = ProjectionTable(key: key, exact: true)
            let wrap = Int64(key.sourceWidth - 1) << 8
            // Radians per 1/256 source pixel, across and down; of the view's pixel at its centre.
            let across = 2 * Double.pi / Double(wrap)
            let down = Double.pi / Double((key.sourceHeight - 1) << 8)
            let viewPixel = 2 * tan(key.fov / 2 * .pi / 180) / Double(key.outputWidth)
            let pixel = max(2 * Double.pi / Double(key.sourceWidth - 1), viewPixel)
            var over = 0
            for i in 0..<grid.u.count {
                var du = abs(Int64(grid.u[i]) - Int64(exact.u[i]))
                du = min(du, wrap - du)
                let latitude = (Double(exact.v[i]) * down) - .pi / 2
                let angle = hypot(
                    Double(du) * across * cos(latitude), Double(abs(Int64(grid.v[i]) - Int64(exact.v[i]))) * down)
                worst = max(worst, angle / pixel)
                if angle > pixel / 32 { over += 1 }
            }
            #expect(over == 0, "\(key): \(over) of \(grid.u.count) pixels off by more than 1/32 px")
        }
        print("grid table against the exact one: worst \(worst) px")
    }

    /// A table's memory goes back to ``TableMemory`` when the table goes, and the next table of its size takes
    /// it and writes it afresh: the same taps as a table of the same key made in new memory; blocks of other sizes
    /// given back later push it out. (The counts assume no other test makes tables meanwhile: `--no-parallel`.)
    @Test func tableMemoryIsReusedAndRewritten() {
        // A size no other test uses.
        func key(_ width: Int, _ pitch: Double) -> ProjectionTableKey {
            ProjectionTableKey(
                outputWidth: width, outputHeight: 23, sourceWidth: 512, sourceHeight: 256, fov: 80, pitch: pitch,
                roll: 3, bakedYaw: 20, panoramaTilt: 0, panoramaRoll: 0)
        }
        let bytes = 8 * 37 * 23
        let reference = ProjectionTable(key: key(37, -20))
        let referenceU = Array(reference.u)
        let referenceV = Array(reference.v)
        #expect(TableMemory.blocks.waiting(bytes: bytes) == 0)
        var address: UnsafePointer<UInt32>?
        do {
            let first = ProjectionTable(key: key(37, 10))
            address = first.u.baseAddress
            #expect(Array(first.u) != referenceU)
        }
        #expect(TableMemory.blocks.waiting(bytes: bytes) == 1)
        do {
            let second = ProjectionTable(key: key(37, -20))
            #expect(TableMemory.blocks.waiting(bytes: bytes) == 0)
            #expect(second.u.baseAddress == address)
            #expect(Array(second.u) == referenceU && Array(second.v) == referenceV)
        }
        #expect(TableMemory.blocks.waiting(bytes: bytes) == 1)
        do {
            let others = (1...TableMemory.kept).map { ProjectionTable(key: key(37 + $0, 0)) }
            withExtendedLifetime(others) {}
        }
        #expect(TableMemory.blocks.waiting(bytes: bytes) == 0)
        withExtendedLifetime(reference) {}
    }

    @Test("bad parameters are errors, not crashes")
    func badParameters() throws {
        let projector = try Projector(width: 16, height: 16)
        for fov in [0.0, 180, -5, .nan] {
            #expect(throws: LapseError.self) {
                try projector.render(Self.level, camera: CameraPose(heading: 0, fov: fov))
            }
        }
        #expect(throws: LapseError.self) { try projector.render(Self.level, camera: CameraPose(heading: .infinity)) }
        #expect(throws: LapseError.self) {
            try projector.render(PixelBuffer(width: 1, height: 1), camera: CameraPose(heading: 0))
        }
        #expect(throws: LapseError.self) { try Projector(width: 0, height: 10) }
    }
}
