//! Grid Knock: the test vectors of docs/rules/grid_knock.md (section 9) (conformance: tests/conformance.rs),
//! hidden-information properties, and refusal of malformed or illegal input.
//!
//! Wrapped in `games::grid_knock` so that `cargo test -p tablier-core games::grid_knock` selects
//! these tests as well as any in the module.

mod games {
    mod grid_knock {
        use prost::Message;
        use tablier_core::conformance;
        use tablier_core::error::CoreError;
        use tablier_core::game::{Game, Options, Viewer};
        use tablier_core::games::grid_knock::{self as gk, Ev, GridKnock, Move, Phase, State};
        use tablier_core::proto::grid_knock as pb;
        use tablier_core::rng::Rng;

        // ------------------------------------------------------------------ helpers

        /// Slot (owner, row 1..3, col 1..4).
        fn sl(o: u8, r: u8, c: u8) -> u8 {
            o * 12 + (r - 1) * 4 + (c - 1)
        }

        /// Domain cell (row 1..3, d 0..4) of seat i.
        fn dc(st: &State, i: u8, r: u8, d: u8) -> u8 {
            st.cfg.dom[i as usize][(r as usize - 1) * 5 + d as usize]
        }

        use tablier_core::games::grid_knock::DECK;

        /// A constructed position: given slots (face up / down / empty); every other slot holds a
        /// face-down card from the rest of the deck; the given discard pile and draw-pile top cards,
        /// with the rest of the deck under them.
        struct Pos {
            n: u8,
            opts: Options,
            given: Vec<(u8, Option<(i8, bool)>)>,
        }

        impl Pos {
            fn new(n: u8) -> Pos {
                Pos {
                    n,
                    opts: Options::new(),
                    given: vec![],
                }
            }
            fn opt(mut self, k: &str, v: &str) -> Pos {
                self.opts.insert(k.into(), v.into());
                self
            }
            fn set(&mut self, s: u8, tok: &str) {
                let t = tok.trim();
                let v = if t == "__" {
                    None
                } else if let Some(x) = t.strip_prefix('?') {
                    Some((x.parse().unwrap(), false))
                } else {
                    Some((t.parse().unwrap(), true))
                };
                self.given.retain(|(x, _)| *x != s);
                self.given.push((s, v));
            }
            /// Row r (1..3) of seat i's domain, d0..d4.
            fn drow(mut self, i: u8, r: u8, toks: &[&str]) -> Pos {
                let cfg = GridKnock::checked_config(self.n as u32, &Options::new()).unwrap();
                for (d, t) in toks.iter().enumerate() {
                    let s = cfg.dom[i as usize][(r as usize - 1) * 5 + d];
                    self.set(s, t);
                }
                self
            }
            fn at(mut self, s: u8, tok: &str) -> Pos {
                self.set(s, tok);
                self
            }
            /// Builds the state at CHOOSE_SOURCE for `active`. `draw_top` is bottom -> top.
            fn build(self, active: u8, discard: &[i8], draw_top: &[i8]) -> State {
                let cfg = GridKnock::checked_config(self.n as u32, &self.opts).unwrap();
                let mut st = GridKnock::initial(&cfg);
                let mut left = [0i32; 15];
                for (v, c) in DECK {
                    left[(v + 2) as usize] = c as i32;
                }
                let take = |v: i8, left: &mut [i32; 15]| {
                    left[(v + 2) as usize] -= 1;
                };
                let nslots = 12 * self.n;
                let mut given = [None::<Option<(i8, bool)>>; 96];
                for (s, v) in &self.given {
                    given[*s as usize] = Some(*v);
                }
                for s in 0..nslots {
                    if let Some(Some((v, up))) = given[s as usize] {
                        st.val[s as usize] = v;
                        st.filled |= 1u128 << s;
                        if up {
                            st.up |= 1u128 << s;
                        }
                        take(v, &mut left);
                    }
                }
                for &v in discard.iter().chain(draw_top) {
                    take(v, &mut left);
                }
                // Fillers, face down, from the remaining deck (highest values first keeps them varied).
                let mut pool: Vec<i8> = Vec::new();
                for k in (0..15).rev() {
                    for _ in 0..left[k].max(0) {
                        pool.push(k as i8 - 2);
                    }
                }
                // Interleave values so that neighbouring fillers differ.
                let mut inter = Vec::new();
                let (a, b) = pool.split_at(pool.len() / 2);
                for i in 0..a.len().max(b.len()) {
                    if i < a.len() {
                        inter.push(a[i]);
                    }
                    if i < b.len() {
                        inter.push(b[i]);
                    }
                }
                let mut it = inter.into_iter();
                for s in 0..nslots {
                    if given[s as usize].is_none() {
                        let v = it.next().unwrap();
                        st.val[s as usize] = v;
                        st.filled |= 1u128 << s;
                    }
                }
                let rest: Vec<i8> = it.collect();
                let mut draw: Vec<i8> = rest;
                draw.extend_from_slice(draw_top);
                st.draw[..draw.len()].copy_from_slice(&draw);
                st.draw_len = draw.len() as u8;
                st.disc[..discard.len()].copy_from_slice(discard);
                st.disc_len = discard.len() as u8;
                st.round = 1;
                st.dealer = ((active as usize + self.n as usize - 1) % self.n as usize) as u8;
                st.first = active;
                st.active = active;
                st.phase = Phase::ChooseSource;
                st
            }
        }

        fn rng() -> Rng {
            Rng::from_u64(42)
        }

        /// Plays a move through the protobuf boundary (decide + evolve); returns the internal events.
        fn play(st: &mut State, seat: u8, mv: Move) -> Vec<Ev> {
            try_play(st, seat, mv).unwrap_or_else(|e| panic!("{mv:?} by {seat} refused: {e}"))
        }

        fn try_play(st: &mut State, seat: u8, mv: Move) -> Result<Vec<Ev>, CoreError> {
            let evs = GridKnock::decide(st, seat as u32, &gk::to_action(mv), &mut rng())?;
            let mut out = vec![];
            for e in &evs {
                GridKnock::evolve(st, e).unwrap();
                out.push(gk::pb_to_ev(e).unwrap());
            }
            Ok(out)
        }

        fn refused(st: &State, seat: u8, mv: Move) -> CoreError {
            tablier_core::game::decide_checked::<GridKnock>(st, seat as u32, &gk::to_action(mv), &mut rng())
                .expect_err("should be refused")
        }

        fn reason(e: &CoreError) -> &'static str {
            match e {
                CoreError::Rule { reason, .. } => reason,
                CoreError::Malformed(_) => "MALFORMED",
                _ => "OTHER",
            }
        }

        fn legal(st: &State, seat: u8) -> Vec<Move> {
            let mut v = vec![];
            gk::legal_moves(st, seat, &mut v);
            v
        }

        fn discard(st: &State) -> Vec<i8> {
            st.disc[..st.disc_len as usize].to_vec()
        }

        fn pass_all(st: &mut State) {
            while st.phase == Phase::KnockWindow {
                let s = gk::to_act_mask(st).trailing_zeros() as u8;
                play(st, s, Move::PassKnock);
            }
        }

        fn sorted(mut c: [u8; 3]) -> [u8; 3] {
            c.sort();
            c
        }

        fn triple_moves(st: &State, seat: u8) -> Vec<[u8; 3]> {
            legal(st, seat)
                .into_iter()
                .filter_map(|m| {
                    if let Move::Triple(c) = m {
                        Some(sorted(c))
                    } else {
                        None
                    }
                })
                .collect()
        }

        /// A plain turn for the active seat: draw, everybody passes, flip a face-down card if any
        /// (else swap into the first slot), close any triples window.
        fn simple_turn(st: &mut State) {
            let a = st.active;
            if st.phase != Phase::ChooseSource {
                return;
            }
            play(st, a, Move::Draw);
            pass_all(st);
            if st.phase == Phase::KnockDecision {
                play(st, a, Move::Refuse);
            }
            let mv = legal(st, a)
                .into_iter()
                .find(|m| matches!(m, Move::DiscardReveal(_)))
                .unwrap_or_else(|| legal(st, a)[0]);
            play(st, a, mv);
            while st.phase == Phase::Triples {
                let o = st.tri_owner;
                play(st, o, Move::EndTriples);
            }
        }

        // ------------------------------------------------------------------ test vectors

        #[test]
        fn tv01_domain_mapping() {
            let c3 = GridKnock::checked_config(3, &Options::new()).unwrap();
            let st = GridKnock::initial(&c3);
            for r in 1..=3 {
                assert_eq!(dc(&st, 0, r, 0), sl(1, r, 4));
                assert_eq!(dc(&st, 1, r, 0), sl(2, r, 4));
                assert_eq!(dc(&st, 2, r, 0), sl(0, r, 4));
                for d in 1..=4 {
                    assert_eq!(dc(&st, 0, r, d), sl(0, r, d));
                }
            }
            let s = sl(0, 2, 4);
            assert!(
                c3.dom_mask[0] >> s & 1 == 1
                    && c3.dom_mask[2] >> s & 1 == 1
                    && c3.dom_mask[1] >> s & 1 == 0
            );
            let s = sl(0, 2, 3);
            assert!(
                c3.dom_mask[0] >> s & 1 == 1
                    && c3.dom_mask[1] >> s & 1 == 0
                    && c3.dom_mask[2] >> s & 1 == 0
            );
            assert_eq!(gk::slot_domains(3, sl(0, 2, 4)), (0, Some(2)));
            assert_eq!(gk::slot_domains(3, sl(0, 2, 3)), (0, None));
            let c2 = GridKnock::checked_config(2, &Options::new()).unwrap();
            let st2 = GridKnock::initial(&c2);
            for r in 1..=3 {
                assert_eq!(dc(&st2, 0, r, 0), sl(1, r, 4));
                assert_eq!(dc(&st2, 1, r, 0), sl(0, r, 4));
                for d in 1..=4 {
                    assert_eq!(dc(&st2, 0, r, d), sl(0, r, d));
                    assert_eq!(dc(&st2, 1, r, d), sl(1, r, d));
                }
            }
        }

        #[test]
        fn tv02_cross_boundary_triple_and_no_triple_across_domain_edge() {
            let mut st = Pos::new(3)
                .at(sl(1, 2, 1), "?3")
                .at(sl(1, 2, 2), "?3")
                .at(sl(1, 2, 3), "?8")
                .at(sl(1, 2, 4), "7")
                .at(sl(0, 2, 1), "7")
                .at(sl(0, 2, 2), "7")
                .at(sl(0, 2, 3), "?1")
                .at(sl(0, 2, 4), "?2")
                .at(sl(0, 1, 1), "?4")
                .at(sl(0, 1, 2), "9")
                .at(sl(0, 1, 3), "5")
                .at(sl(0, 1, 4), "5")
                .at(sl(2, 1, 1), "5")
                .at(sl(2, 1, 2), "?6")
                .at(sl(2, 1, 3), "1")
                .at(sl(2, 1, 4), "0")
                .build(0, &[9], &[]);
            let t0 = gk::triples(&st, 0);
            assert_eq!(
                &t0.cells[..t0.len],
                &[[sl(1, 2, 4), sl(0, 2, 1), sl(0, 2, 2)]]
            );
            assert_eq!(gk::triples(&st, 1).len, 0);
            assert_eq!(
                gk::triples(&st, 2).len,
                0,
                "5 5 | 5 across the D0/D2 edge is no triple"
            );
            // P0 discards it in a window of his.
            st.phase = Phase::Triples;
            st.tri_owner = 0;
            st.tri_ctx = gk::Ctx::Reveal;
            play(
                &mut st,
                0,
                Move::Triple([sl(0, 2, 2), sl(1, 2, 4), sl(0, 2, 1)]),
            );
            assert_eq!((st.cnt(0), st.cnt(1), st.cnt(2)), (12, 14, 15));
            assert_eq!(discard(&st), vec![9, 7, 7, 7]);
        }

        fn tv03_pos() -> State {
            Pos::new(3)
                .drow(0, 1, &["7", "?1", "?12", "9", "?3"])
                .drow(0, 2, &["0", "5", "4", "?4", "2"])
                .drow(0, 3, &["-1", "8", "4", "10", "?4"])
                .build(0, &[7, 8, 4], &[])
        }

        #[test]
        fn tv03_take_discard_keep_column_triple_then_w_on_top() {
            let mut st = tv03_pos();
            let evs = play(&mut st, 0, Move::TakeDiscard);
            assert_eq!(evs, vec![Ev::TookDiscard { seat: 0, value: 4 }]);
            assert_eq!(
                st.phase,
                Phase::SwapDiscard,
                "no knock window after take_from_discard"
            );
            assert_eq!(discard(&st), vec![7, 8]);
            assert_eq!(
                reason(&refused(&st, 0, Move::DiscardReveal(sl(0, 1, 1)))),
                "MUST_SWAP"
            );
            assert!(legal(&st, 0).iter().all(|m| matches!(m, Move::Keep(_))));
            play(&mut st, 0, Move::Keep(sl(0, 1, 2)));
            assert_eq!(st.w, 12);
            assert_eq!(
                triple_moves(&st, 0),
                vec![[sl(0, 1, 2), sl(0, 2, 2), sl(0, 3, 2)]]
            );
            play(
                &mut st,
                0,
                Move::Triple([sl(0, 1, 2), sl(0, 2, 2), sl(0, 3, 2)]),
            );
            assert_eq!(discard(&st), vec![7, 8, 4, 4, 4, 12]);
            assert_eq!(st.cnt(0), 12);
            assert_eq!(st.active, 1, "turn over");
            gk::invariants(&st).unwrap();
        }

        #[test]
        fn tv04_discard_and_reveal_triple_goes_on_top_of_x() {
            let pos = || {
                Pos::new(3)
                    .drow(0, 1, &["3", "?5", "1", "1", "?2"])
                    .drow(0, 2, &["?8", "2", "0", "7", "9"])
                    .drow(0, 3, &["1", "?0", "6", "6", "?6"])
                    .build(0, &[3], &[10])
            };
            let mut st = pos();
            let evs = play(&mut st, 0, Move::Draw);
            assert_eq!(
                evs,
                vec![Ev::Drawn {
                    seat: 0,
                    value: 10,
                    eligible: 0b110
                }]
            );
            pass_all(&mut st);
            play(&mut st, 0, Move::DiscardReveal(sl(0, 3, 4)));
            assert_eq!(discard(&st), vec![3, 10]);
            assert_eq!(
                triple_moves(&st, 0),
                vec![[sl(0, 3, 2), sl(0, 3, 3), sl(0, 3, 4)]]
            );
            play(
                &mut st,
                0,
                Move::Triple([sl(0, 3, 2), sl(0, 3, 3), sl(0, 3, 4)]),
            );
            assert_eq!(discard(&st), vec![3, 10, 6, 6, 6]);
            assert_eq!((st.cnt(0), st.cnt(2)), (12, 14));
            gk::invariants(&st).unwrap();
            // Variant: end_triples keeps the triple on the table.
            let mut st = pos();
            play(&mut st, 0, Move::Draw);
            pass_all(&mut st);
            play(&mut st, 0, Move::DiscardReveal(sl(0, 3, 4)));
            play(&mut st, 0, Move::EndTriples);
            assert_eq!(discard(&st), vec![3, 10]);
            assert_eq!(gk::triples(&st, 0).len, 1);
        }

        fn tv05_pos() -> State {
            Pos::new(3)
                .at(sl(1, 1, 4), "2")
                .at(sl(1, 2, 4), "6")
                .at(sl(1, 3, 4), "?7")
                .at(sl(0, 1, 1), "0")
                .at(sl(0, 1, 2), "6")
                .at(sl(0, 1, 3), "9")
                .at(sl(0, 1, 4), "?5")
                .at(sl(0, 2, 1), "6")
                .at(sl(0, 2, 2), "?3")
                .at(sl(0, 2, 3), "6")
                .at(sl(0, 2, 4), "11")
                .at(sl(0, 3, 1), "1")
                .at(sl(0, 3, 2), "6")
                .at(sl(0, 3, 3), "-1")
                .at(sl(0, 3, 4), "12")
                .build(0, &[5], &[6])
        }

        fn tv05_after_keep() -> State {
            let mut st = tv05_pos();
            assert_eq!(gk::triples(&st, 0).len, 0);
            play(&mut st, 0, Move::Draw);
            pass_all(&mut st);
            play(&mut st, 0, Move::Keep(sl(0, 2, 2)));
            assert_eq!(st.w, 3);
            st
        }

        #[test]
        fn tv05_row_and_column_through_one_card_then_chain() {
            let st = tv05_after_keep();
            let row_a = [sl(1, 2, 4), sl(0, 2, 1), sl(0, 2, 2)];
            let row_b = [sl(0, 2, 1), sl(0, 2, 2), sl(0, 2, 3)];
            let col = [sl(0, 1, 2), sl(0, 2, 2), sl(0, 3, 2)];
            assert_eq!(
                triple_moves(&st, 0),
                vec![sorted(row_a), sorted(row_b), sorted(col)]
            );
            // Four cells, or both lines at once: illegal.
            let four = pb::Action {
                kind: Some(pb::action::Kind::DiscardTriple(pb::DiscardTriple {
                    cells: [sl(1, 2, 4), sl(0, 2, 1), sl(0, 2, 2), sl(0, 2, 3)]
                        .iter()
                        .map(|&s| pb::Slot {
                            owner: (s / 12) as u32,
                            row: (s % 12 / 4 + 1) as u32,
                            col: (s % 4 + 1) as u32,
                        })
                        .collect(),
                })),
            };
            assert_eq!(
                reason(&GridKnock::decide(&st, 0, &four, &mut rng()).unwrap_err()),
                "NOT_A_TRIPLE"
            );
            // Path A: column first, then the chain created by the gap.
            let mut a = st.clone();
            play(&mut a, 0, Move::Triple(col));
            let chain = [sl(1, 2, 4), sl(0, 2, 1), sl(0, 2, 3)];
            assert_eq!(triple_moves(&a, 0), vec![sorted(chain)]);
            play(&mut a, 0, Move::Triple(chain));
            assert_eq!(discard(&a), vec![5, 6, 6, 6, 6, 6, 6, 3]);
            assert_eq!(a.cnt(0), 9);
            assert!(
                a.filled >> sl(1, 2, 4) & 1 == 0,
                "(1,2,4) is empty in D1 too"
            );
            // Path B: row d1-d3 first.
            let mut b = st.clone();
            play(&mut b, 0, Move::Triple(row_b));
            assert_eq!(discard(&b), vec![5, 6, 6, 6, 3]);
            assert_eq!(b.cnt(0), 12);
            // Path C: row d0-d2 first.
            let mut c = st.clone();
            play(&mut c, 0, Move::Triple(row_a));
            assert_eq!(discard(&c), vec![5, 6, 6, 6, 3]);
            assert_eq!(c.cnt(0), 12);
            gk::invariants(&a).unwrap();
        }

        #[test]
        fn tv06_four_identical_cards_in_a_row() {
            let mut st = Pos::new(3)
                .drow(0, 1, &["3", "3", "?8", "3", "5"])
                .drow(0, 2, &["0", "1", "2", "4", "?7"])
                .drow(0, 3, &["?9", "10", "11", "-1", "12"])
                .build(0, &[6], &[3]);
            play(&mut st, 0, Move::Draw);
            pass_all(&mut st);
            play(&mut st, 0, Move::Keep(sl(0, 1, 2)));
            assert_eq!(st.w, 8);
            let t1 = [sl(1, 1, 4), sl(0, 1, 1), sl(0, 1, 2)];
            let t2 = [sl(0, 1, 1), sl(0, 1, 2), sl(0, 1, 3)];
            assert_eq!(triple_moves(&st, 0), vec![sorted(t1), sorted(t2)]);
            let mut b = st.clone();
            play(&mut st, 0, Move::Triple(t2));
            assert_eq!(discard(&st), vec![6, 3, 3, 3, 8]);
            play(&mut b, 0, Move::Triple(t1));
            assert!(b.filled >> sl(1, 1, 4) & 1 == 0 && b.filled >> sl(0, 1, 3) & 1 == 1);
        }

        fn tv07_pos() -> State {
            Pos::new(4)
                .drow(2, 1, &["5", "2", "2", "?9", "8"])
                .drow(2, 2, &["?4", "7", "0", "1", "?12"])
                .drow(2, 3, &["3", "?10", "11", "4", "6"])
                .drow(0, 3, &["5", "12", "?2", "7", "?1"])
                .at(sl(0, 1, 1), "4")
                .at(sl(0, 2, 1), "-1")
                .build(0, &[10], &[2])
        }

        fn tv07_until_accept() -> State {
            let mut st = tv07_pos();
            let evs = play(&mut st, 0, Move::Draw);
            assert_eq!(
                evs,
                vec![Ev::Drawn {
                    seat: 0,
                    value: 2,
                    eligible: 0b1110
                }]
            );
            assert_eq!(
                GridKnock::to_act(&st).to_vec(),
                vec![1, 2, 3],
                "all of E answer at once"
            );
            play(&mut st, 1, Move::PassKnock);
            play(&mut st, 2, Move::Knock);
            let evs = play(&mut st, 3, Move::PassKnock);
            assert_eq!(
                evs,
                vec![
                    Ev::KnockAnswered {
                        seat: 3,
                        knock: false
                    },
                    Ev::KnockClosed { knockers: 0b100 }
                ]
            );
            assert_eq!(legal(&st, 0), vec![Move::Accept(2), Move::Refuse]);
            st
        }

        #[test]
        fn tv07_full_knock_non_adjacent_knocker() {
            let mut st = tv07_until_accept();
            play(&mut st, 0, Move::Accept(2));
            let evs = play(&mut st, 2, Move::KnockerSwap(sl(2, 1, 3)));
            assert_eq!(
                evs[0],
                Ev::KnockerSwapped {
                    knocker: 2,
                    slot: sl(2, 1, 3),
                    placed: 2,
                    removed: 9,
                    removed_up: false
                }
            );
            assert_eq!(st.y, 9);
            play(
                &mut st,
                2,
                Move::Triple([sl(2, 1, 1), sl(2, 1, 2), sl(2, 1, 3)]),
            );
            assert_eq!(discard(&st), vec![10, 2, 2, 2]);
            assert_eq!(st.phase, Phase::TakeFromKnocker);
            let takes: Vec<Move> = legal(&st, 0);
            assert_eq!(takes.len(), 12, "every non-empty slot of D2");
            assert_eq!(
                reason(&refused(&st, 0, Move::Take(sl(2, 1, 2)))),
                "EMPTY_SLOT"
            );
            play(&mut st, 0, Move::Take(sl(2, 2, 2)));
            assert_eq!((st.z, st.q), (0, sl(2, 2, 2)));
            let evs = play(&mut st, 0, Move::Return(sl(0, 3, 1)));
            assert!(evs.contains(&Ev::WDiscarded { seat: 0, value: 12 }));
            assert!(evs.contains(&Ev::YPlaced {
                knocker: 2,
                slot: sl(2, 2, 2),
                value: 9
            }));
            assert_eq!(discard(&st), vec![10, 2, 2, 2, 12]);
            assert_eq!(st.val[sl(0, 3, 1) as usize], 0);
            assert_eq!(st.val[sl(2, 2, 2) as usize], 9);
            assert_eq!((st.cnt(2), st.cnt(0)), (12, 15));
            assert_eq!(st.closer, u8::MAX);
            assert_eq!(st.active, 1);
            gk::invariants(&st).unwrap();
        }

        /// Applies a host command's events; returns them as internal events.
        fn host(st: &mut State, command: &str) -> Result<Vec<Ev>, CoreError> {
            let evs = GridKnock::host_command(st, command, &mut rng())?;
            evs.iter().map(|e| GridKnock::evolve(st, e)).collect::<Result<(), _>>().unwrap();
            Ok(evs.iter().map(|e| gk::pb_to_ev(e).unwrap()).collect())
        }

        #[test]
        fn amb32_closing_the_knock_window_passes_for_the_seats_still_to_answer() {
            let mut st = tv07_pos();
            play(&mut st, 0, Move::Draw);
            play(&mut st, 2, Move::Knock);
            let evs = host(&mut st, "close_knock_window").unwrap();
            assert_eq!(
                evs,
                vec![
                    Ev::KnockAnswered { seat: 1, knock: false },
                    Ev::KnockAnswered { seat: 3, knock: false },
                    Ev::KnockClosed { knockers: 0b100 },
                ]
            );
            assert_eq!(legal(&st, 0), vec![Move::Accept(2), Move::Refuse], "the knock stands");
            // The same state as if seats 1 and 3 had passed themselves.
            let mut by_hand = tv07_pos();
            play(&mut by_hand, 0, Move::Draw);
            play(&mut by_hand, 2, Move::Knock);
            play(&mut by_hand, 1, Move::PassKnock);
            play(&mut by_hand, 3, Move::PassKnock);
            assert_eq!(st, by_hand);
        }

        #[test]
        fn amb32_a_timed_out_pass_looks_like_any_other_pass() {
            let mut st = tv07_pos();
            play(&mut st, 0, Move::Draw);
            let timed_out = GridKnock::host_command(&st, "close_knock_window", &mut rng()).unwrap();
            let passed = GridKnock::decide(&st, 1, &gk::to_action(Move::PassKnock), &mut rng()).unwrap();
            for viewer in [Viewer::Seat(0), Viewer::Seat(1), Viewer::Seat(2), Viewer::Spectator, Viewer::Auditor] {
                assert_eq!(
                    GridKnock::redact(&timed_out[0], viewer).map(|e| e.encode_to_vec()),
                    GridKnock::redact(&passed[0], viewer).map(|e| e.encode_to_vec()),
                    "{viewer:?}"
                );
            }
        }

        #[test]
        fn amb32_no_knock_window_no_closing_it() {
            let mut st = tv07_pos();
            let before = st.clone();
            let e = host(&mut st, "close_knock_window").unwrap_err();
            assert_eq!(reason(&e), "NO_KNOCK_WINDOW");
            assert_eq!(st, before);
            play(&mut st, 0, Move::Draw);
            pass_all(&mut st);
            assert_eq!(reason(&host(&mut st, "close_knock_window").unwrap_err()), "NO_KNOCK_WINDOW");
            let info = tablier_core::registry::find("grid_knock").unwrap().info();
            assert_eq!(info.host_commands, vec!["close_knock_window".to_string()]);
        }

        #[test]
        fn amb32_an_open_window_runs_the_timer_until_it_closes() {
            use tablier_core::game::Timer;
            let mut st = tv07_pos();
            assert_eq!(GridKnock::timer(&st), None, "no window, no timer");
            play(&mut st, 0, Move::Draw);
            let timer = GridKnock::timer(&st).expect("a window is open");
            assert_eq!((timer.command, timer.seconds), ("close_knock_window", 60));
            play(&mut st, 2, Move::Knock);
            assert_eq!(GridKnock::timer(&st), Some(timer), "an answer does not restart the clock");
            let mut untimed = st.clone();
            untimed.cfg.knock_timeout = 0;
            assert_eq!(GridKnock::timer(&untimed), None, "knock_timeout 0: only the host closes it");
            let mut later = st.clone();
            later.turns += 1;
            assert_ne!(GridKnock::timer(&later).map(|t: Timer| t.key), Some(timer.key), "the next turn's window is another wait");
            host(&mut st, "close_knock_window").unwrap();
            assert_eq!(GridKnock::timer(&st), None);
            let opts = |v: &str| Options::from([("knock_timeout".to_string(), v.to_string())]);
            assert_eq!(GridKnock::checked_config(3, &opts("5")).unwrap().knock_timeout, 5);
            for bad in ["-1", "86401", "soon"] {
                assert!(matches!(GridKnock::checked_config(3, &opts(bad)), Err(CoreError::InvalidOption(_))), "{bad}");
            }
        }

        #[test]
        fn tv07b_knocker_keeps_triple_active_takes_x_back() {
            let mut st = tv07_until_accept();
            play(&mut st, 0, Move::Accept(2));
            play(&mut st, 2, Move::KnockerSwap(sl(2, 1, 3)));
            play(&mut st, 2, Move::EndTriples);
            play(&mut st, 0, Move::Take(sl(2, 1, 3)));
            assert_eq!(st.z, 2);
            play(&mut st, 0, Move::Return(sl(0, 3, 1)));
            let row: Vec<i8> = (0..5).map(|d| st.val[dc(&st, 2, 1, d) as usize]).collect();
            assert_eq!(row, vec![5, 2, 2, 9, 8]);
        }

        #[test]
        fn tv07c_refuse_keeps_x() {
            let mut st = tv07_until_accept();
            play(&mut st, 0, Move::Refuse);
            assert_eq!((st.phase, st.x), (Phase::DecideDrawn, 2));
            assert_eq!(st.knocker, u8::MAX);
        }

        #[test]
        fn tv08_overlap_restriction() {
            // K = P1, A's left neighbour.
            let mut st = Pos::new(3).build(0, &[10], &[2]);
            play(&mut st, 0, Move::Draw);
            play(&mut st, 1, Move::Knock);
            play(&mut st, 2, Move::PassKnock);
            play(&mut st, 0, Move::Accept(1));
            play(&mut st, 1, Move::KnockerSwap(sl(1, 1, 1)));
            while st.phase == Phase::Triples {
                play(&mut st, 1, Move::EndTriples);
            }
            for r in 1..=3 {
                assert_eq!(
                    reason(&refused(&st, 0, Move::Take(sl(1, r, 4)))),
                    "IN_OWN_DOMAIN"
                );
            }
            let takes = legal(&st, 0);
            assert!(
                takes.contains(&Move::Take(sl(1, 2, 3)))
                    && takes.contains(&Move::Take(sl(2, 1, 4)))
            );
            assert_eq!(takes.len(), 12);
            // K = P2, A's right neighbour; P2 may swap into P0's column 4.
            let mut st = Pos::new(3).build(0, &[10], &[2]);
            play(&mut st, 0, Move::Draw);
            play(&mut st, 1, Move::PassKnock);
            play(&mut st, 2, Move::Knock);
            play(&mut st, 0, Move::Accept(2));
            play(&mut st, 2, Move::KnockerSwap(sl(0, 2, 4)));
            while st.phase == Phase::Triples {
                play(&mut st, 2, Move::EndTriples);
            }
            for r in 1..=3 {
                assert_eq!(
                    reason(&refused(&st, 0, Move::Take(sl(0, r, 4)))),
                    "IN_OWN_DOMAIN"
                );
            }
            let takes = legal(&st, 0);
            assert_eq!(takes.len(), 12);
            assert!(takes
                .iter()
                .all(|m| matches!(m, Move::Take(s) if s / 12 == 2)));
        }

        fn tv09_pos(b: bool) -> State {
            let mut p = Pos::new(3)
                .drow(2, 1, &["?8", "__", "__", "__", "__"])
                .drow(2, 2, &["4", "4", "?11", "__", "__"])
                .drow(2, 3, &["?1", "__", "__", "__", "__"]);
            if b {
                p = p
                    .at(sl(0, 1, 4), "__")
                    .at(sl(0, 3, 4), "__")
                    .at(sl(2, 1, 3), "7");
                for r in 1..=3 {
                    p = p.at(sl(1, r, 4), "__");
                    for c in 1..=4 {
                        if (r, c) != (2, 4) {
                            p = p.at(sl(0, r, c), "__");
                        }
                    }
                }
            }
            p.build(0, &[9], &[4])
        }

        #[test]
        fn tv09_knocker_left_with_shared_cards_only_y_discarded() {
            let mut st = tv09_pos(false);
            assert_eq!(st.cnt(2), 5);
            play(&mut st, 0, Move::Draw);
            assert!(st.eligible >> 2 & 1 == 1);
            play(&mut st, 1, Move::PassKnock);
            play(&mut st, 2, Move::Knock);
            play(&mut st, 0, Move::Accept(2));
            play(&mut st, 2, Move::KnockerSwap(sl(2, 2, 2)));
            assert_eq!(st.y, 11);
            let evs = play(
                &mut st,
                2,
                Move::Triple([sl(0, 2, 4), sl(2, 2, 1), sl(2, 2, 2)]),
            );
            assert!(evs.contains(&Ev::YDiscarded {
                knocker: 2,
                value: 11
            }));
            assert_eq!(discard(&st), vec![9, 4, 4, 4, 11]);
            assert_eq!(st.cnt(0), 14);
            assert_eq!(st.active, 1);
            gk::invariants(&st).unwrap();
            // With cnt(D2) = 3 before the draw, P2 may not knock.
            let mut st = tv09_pos(false);
            st.val[sl(2, 2, 2) as usize] = i8::MIN;
            st.filled &= !(1u128 << sl(2, 2, 2));
            st.val[sl(0, 3, 4) as usize] = i8::MIN;
            st.filled &= !(1u128 << sl(0, 3, 4));
            assert_eq!(st.cnt(2), 3);
            play(&mut st, 0, Move::Draw);
            assert_eq!(st.eligible, 0b010);
            assert_eq!(reason(&refused(&st, 2, Move::Knock)), "NOT_YOUR_TURN");
        }

        #[test]
        fn tv09b_active_seat_left_with_no_card_y_discarded_and_closes() {
            let mut st = tv09_pos(true);
            assert_eq!((st.cnt(2), st.cnt(0)), (4, 1));
            play(&mut st, 0, Move::Draw);
            play(&mut st, 1, Move::PassKnock);
            play(&mut st, 2, Move::Knock);
            play(&mut st, 0, Move::Accept(2));
            play(&mut st, 2, Move::KnockerSwap(sl(2, 2, 2)));
            let evs = play(
                &mut st,
                2,
                Move::Triple([sl(0, 2, 4), sl(2, 2, 1), sl(2, 2, 2)]),
            );
            assert!(evs.contains(&Ev::YDiscarded {
                knocker: 2,
                value: 11
            }));
            assert_eq!(discard(&st), vec![9, 4, 4, 4, 11]);
            assert_eq!(st.cnt(0), 0);
            assert_eq!(st.closer, 0);
            gk::invariants(&st).unwrap();
        }

        #[test]
        fn tv10_who_may_knock() {
            // (a) N = 2: no window.
            let mut st = Pos::new(2).build(0, &[10], &[2]);
            play(&mut st, 0, Move::Draw);
            assert_eq!((st.eligible, st.phase), (0, Phase::DecideDrawn));
            // (b) N = 3, cnt(D1) = 3, cnt(D2) = 4 -> E = {P2}.
            let mut p = Pos::new(3);
            for r in 1..=3 {
                for c in 1..=4 {
                    if !(r == 1 && c <= 3) {
                        p = p.at(sl(1, r, c), "__");
                    }
                    if !(r == 1 && c == 1) {
                        p = p.at(sl(2, r, c), "__");
                    }
                }
            }
            let mut st = p.build(0, &[10], &[2]);
            assert_eq!((st.cnt(1), st.cnt(2)), (3, 4));
            play(&mut st, 0, Move::Draw);
            assert_eq!(st.eligible, 0b100);
            // (c) take_from_discard: no window whatever the counts.
            let mut st = Pos::new(3).build(0, &[10], &[2]);
            play(&mut st, 0, Move::TakeDiscard);
            assert_eq!((st.eligible, st.phase), (0, Phase::SwapDiscard));
            // (d) N = 4, P1 closed.
            let mut st = Pos::new(4).build(2, &[10], &[2, 3, 4]);
            st.closer = 1;
            st.final_taken = 0b0010;
            play(&mut st, 2, Move::Draw);
            assert_eq!(st.eligible, 0b1001, "P3 and P0");
            let mut st = Pos::new(4).build(3, &[10], &[2]);
            st.closer = 1;
            st.final_taken = 0b0110;
            play(&mut st, 3, Move::Draw);
            assert_eq!(st.eligible, 0b0001, "P0 only");
            let mut st = Pos::new(4)
                .opt("target_score", "1000")
                .build(0, &[10], &[2]);
            st.closer = 1;
            st.final_taken = 0b1110;
            play(&mut st, 0, Move::Draw);
            assert_eq!(st.eligible, 0);
            let r = st.round;
            let mv = legal(&st, 0)[0];
            play(&mut st, 0, mv);
            while st.phase == Phase::Triples {
                play(&mut st, 0, Move::EndTriples);
            }
            assert_eq!(st.round, r + 1, "after P0's turn the round ends");
        }

        #[test]
        fn tv11_domain_completed_by_someone_else_forced_keep() {
            let mut st = Pos::new(2)
                .opt("target_score", "1000")
                .drow(0, 1, &["1", "2", "3", "4", "5"])
                .drow(0, 2, &["6", "7", "8", "9", "10"])
                .drow(0, 3, &["?5", "11", "12", "0", "-1"])
                .build(1, &[4], &[3, 7, 9]);
            st.val[sl(1, 1, 1) as usize] = 2; // D1 keeps other face-down cards anyway
                                              // P1: draw, discard and reveal (1,3,4).
            play(&mut st, 1, Move::Draw);
            let evs = play(&mut st, 1, Move::DiscardReveal(sl(1, 3, 4)));
            assert!(matches!(evs[0], Ev::DiscardedRevealed { revealed: 5, .. }));
            assert_eq!(
                st.closer,
                u8::MAX,
                "P0 is not tested at the end of P1's turn"
            );
            assert_eq!(st.active, 0);
            play(&mut st, 0, Move::Draw);
            assert_eq!(st.x, 7);
            let moves = legal(&st, 0);
            assert_eq!(moves.len(), 15);
            assert!(moves.iter().all(|m| matches!(m, Move::Keep(_))));
            assert_eq!(
                reason(&refused(&st, 0, Move::DiscardReveal(sl(0, 1, 1)))),
                "NOT_FACE_DOWN"
            );
            play(&mut st, 0, Move::Keep(sl(0, 1, 1)));
            while st.phase == Phase::Triples {
                play(&mut st, 0, Move::EndTriples);
            }
            assert_eq!(st.closer, 0);
            assert_eq!(st.active, 1);
            let round = st.round;
            simple_turn(&mut st);
            assert_eq!(st.round, round + 1, "P1's final turn ends the round");
        }

        #[test]
        fn tv12_scoring_double_counted_column_no_removal_closer_penalty() {
            let b0 = [[1, 2, 3, 4], [0, 0, 5, -1], [2, 2, 1, 6]];
            let b1 = [[7, 8, -2, 3], [9, 1, 1, 2], [10, 0, 4, 2]];
            let mut p = Pos::new(2);
            for r in 0..3 {
                for c in 0..4 {
                    p = p.at(sl(0, r + 1, c + 1), &b0[r as usize][c as usize].to_string());
                    p = p.at(sl(1, r + 1, c + 1), &b1[r as usize][c as usize].to_string());
                }
            }
            let mut st = p.build(0, &[5], &[]);
            st.closer = 0;
            let sc = gk::score_round(&st);
            assert_eq!((sc.raw[0], sc.raw[1]), (32, 54));
            assert_eq!((sc.scores[0], sc.scores[1]), (32, 54));
            st.closer = 1;
            let sc = gk::score_round(&st);
            assert_eq!((sc.scores[0], sc.scores[1]), (32, 108));
            assert!(sc.doubled);
            // The 2-2-2 triple in D0 row 3 is not removed at the final reveal: scored through apply.
            st.phase = Phase::RoundEndPending;
            st.final_taken = 0b11;
            let mut evs = vec![];
            gk::auto_steps(&mut st, &mut rng(), &mut evs).unwrap();
            assert!(matches!(&evs[0], Ev::RoundScored(s) if s.raw[0] == 32));
            // Ties and non-positive closers.
            let tie = |a: [i8; 2], bb: [i8; 2], closer: u8| {
                let mut p = Pos::new(2);
                for r in 1..=3 {
                    for c in 1..=4 {
                        p = p.at(sl(0, r, c), "0").at(sl(1, r, c), "0");
                    }
                }
                p = p
                    .at(sl(0, 1, 1), &a[0].to_string())
                    .at(sl(0, 1, 2), &a[1].to_string());
                p = p
                    .at(sl(1, 1, 1), &bb[0].to_string())
                    .at(sl(1, 1, 2), &bb[1].to_string());
                let mut st = p.build(0, &[], &[]);
                st.closer = closer;
                gk::score_round(&st)
            };
            let sc = tie([10, 10], [10, 10], 0);
            assert_eq!((sc.raw[0], sc.scores[0]), (20, 40));
            let sc = tie([-2, -1], [-2, -2], 0);
            assert_eq!((sc.raw[0], sc.raw[1], sc.scores[0]), (-3, -4, -3));
        }

        #[test]
        fn tv13_final_round_order_and_dealer_rotation() {
            let mut st = Pos::new(4).opt("target_score", "1000").build(1, &[5], &[]);
            st.dealer = 3;
            st.first = 0;
            // P1 has everything face up but one card, which he flips now.
            for &s in &st.cfg.dom[1].clone() {
                st.up |= 1u128 << s;
            }
            let last = sl(1, 2, 2);
            st.up &= !(1u128 << last);
            play(&mut st, 1, Move::Draw);
            pass_all(&mut st);
            play(&mut st, 1, Move::DiscardReveal(last));
            while st.phase == Phase::Triples {
                play(&mut st, 1, Move::EndTriples);
            }
            assert_eq!(st.closer, 1);
            let mut order = vec![];
            let round = st.round;
            while st.round == round {
                order.push(st.active);
                simple_turn(&mut st);
            }
            assert_eq!(order, vec![2, 3, 0]);
            assert_eq!((st.dealer, st.first), (0, 1));
        }

        #[test]
        fn tv14_reshuffle_keeps_the_top_discard() {
            let mut st = Pos::new(3).build(0, &[], &[]);
            st.draw_len = 0;
            st.disc[..5].copy_from_slice(&[5, -2, 9, 0, 7]);
            st.disc_len = 5;
            let s2 = st.clone();
            let evs = GridKnock::decide(&st, 0, &gk::to_action(Move::Draw), &mut rng()).unwrap();
            let evs: Vec<Ev> = evs.iter().map(|e| gk::pb_to_ev(e).unwrap()).collect();
            match &evs[0] {
                Ev::Reshuffled { pile, len, top } => {
                    assert_eq!((*len, *top), (4, 7));
                    let mut p = pile[..4].to_vec();
                    p.sort();
                    assert_eq!(p, vec![-2, 0, 5, 9]);
                    assert!(matches!(evs[1], Ev::Drawn { value, .. } if value == pile[3]));
                }
                e => panic!("expected a reshuffle, got {e:?}"),
            }
            for e in &evs {
                gk::apply(&mut st, e).unwrap();
            }
            assert_eq!(discard(&st), vec![7]);
            assert_eq!(st.draw_len, 3);
            let mut st = s2;
            let evs = play(&mut st, 0, Move::TakeDiscard);
            assert_eq!(evs, vec![Ev::TookDiscard { seat: 0, value: 7 }]);
            assert_eq!(discard(&st), vec![5, -2, 9, 0]);
            assert_eq!(st.draw_len, 0);
        }

        fn tv15_state(s0: [&str; 2]) -> State {
            let mut p = Pos::new(3).opt("target_score", "100");
            for o in 0..3 {
                for r in 1..=3 {
                    for c in 1..=4 {
                        p = p.at(sl(o, r, c), "0");
                    }
                }
            }
            p = p
                .at(sl(0, 1, 1), s0[0])
                .at(sl(0, 1, 2), s0[1])
                .at(sl(1, 1, 1), "7");
            let mut st = p.build(0, &[], &[]);
            st.totals[..3].copy_from_slice(&[90, 80, 87]);
            st.closer = 2;
            st.final_taken = 0b111;
            st.phase = Phase::RoundEndPending;
            st
        }

        #[test]
        fn tv15_end_of_game_and_shared_win() {
            let mut st = tv15_state(["12", "1"]);
            let mut evs = vec![];
            gk::auto_steps(&mut st, &mut rng(), &mut evs).unwrap();
            assert_eq!(&st.totals[..3], &[103, 87, 87]);
            let o = GridKnock::outcome(&st).expect("over");
            assert_eq!(o.winners, vec![1, 2]);
            assert_eq!(o.scores, vec![103, 87, 87]);
            assert!(o.lower_is_better && !o.aborted);
            // 9, 7, 0: nobody reaches 100, a new round is dealt.
            let mut st = tv15_state(["8", "1"]);
            let mut evs = vec![];
            // A full deck is needed for the next deal: rebuild the piles from what is missing.
            st.up = st.filled;
            let mut st2 = st.clone();
            st2.disc_len = 0;
            gk::auto_steps(&mut st2, &mut rng(), &mut evs).unwrap_or(());
            assert_eq!(&st2.totals[..3], &[99, 87, 87]);
            assert!(GridKnock::outcome(&st2).is_none());
            assert_eq!(st2.round, 2);
            let _ = st;
        }

        #[test]
        fn tv16_empty_domain_passes_and_closes() {
            let mut p = Pos::new(3).opt("target_score", "1000");
            for r in 1..=3 {
                p = p.at(sl(2, r, 4), "__");
                for c in 1..=4 {
                    p = p.at(sl(1, r, c), "__");
                }
            }
            let mut st = p.build(0, &[5], &[]);
            assert_eq!(st.cnt(1), 0);
            st.phase = Phase::TurnEndPending;
            let mut evs = vec![];
            gk::auto_steps(&mut st, &mut rng(), &mut evs).unwrap();
            assert!(evs.contains(&Ev::EmptyPassed { seat: 1 }));
            assert_eq!(st.closer, 1);
            assert_eq!(st.active, 2);
            simple_turn(&mut st);
            assert_eq!(st.active, 0);
            let before = st.round;
            let mut all = vec![];
            // P0's final turn, then scoring.
            let a = st.active;
            all.extend(play(&mut st, a, Move::Draw));
            pass_all(&mut st);
            let mv = legal(&st, 0)
                .into_iter()
                .find(|m| matches!(m, Move::DiscardReveal(_)))
                .unwrap();
            all.extend(play(&mut st, 0, mv));
            while st.phase == Phase::Triples {
                all.extend(play(&mut st, 0, Move::EndTriples));
            }
            assert_eq!(st.round, before + 1);
            let sc = all
                .iter()
                .find_map(|e| {
                    if let Ev::RoundScored(s) = e {
                        Some(s.clone())
                    } else {
                        None
                    }
                })
                .unwrap();
            assert_eq!(
                (sc.raw[1], sc.scores[1], sc.closer, sc.doubled),
                (0, 0, 1, false)
            );
        }

        #[test]
        fn tv17_illegal_targets() {
            let mut st = Pos::new(3).at(sl(0, 1, 1), "__").build(0, &[5], &[3]);
            play(&mut st, 0, Move::Draw);
            pass_all(&mut st);
            assert_eq!(
                reason(&refused(&st, 0, Move::Keep(sl(0, 1, 1)))),
                "EMPTY_SLOT"
            );
            assert_eq!(
                reason(&refused(&st, 0, Move::Keep(sl(2, 1, 1)))),
                "NOT_IN_DOMAIN"
            );
            // reveal_initial outside the own block.
            let cfg = GridKnock::checked_config(3, &Options::new()).unwrap();
            let init = GridKnock::initial(&cfg);
            let mut st0 = init.clone();
            for e in GridKnock::start(&init, &mut rng()).unwrap() {
                GridKnock::evolve(&mut st0, &e).unwrap();
            }
            assert_eq!(
                reason(&refused(&st0, 0, Move::RevealInitial(sl(1, 1, 4)))),
                "NOT_OWN_BLOCK"
            );
            // Triples: a face-down cell, and cells not consecutive in the compressed line.
            let mut st = Pos::new(3)
                .drow(0, 1, &["4", "4", "?4", "4", "9"])
                .build(0, &[5], &[]);
            st.phase = Phase::Triples;
            st.tri_owner = 0;
            st.tri_ctx = gk::Ctx::Reveal;
            let cells: Vec<u8> = (0..5).map(|d| dc(&st, 0, 1, d)).collect();
            let d = |k: usize| cells[k];
            assert_eq!(
                reason(&refused(&st, 0, Move::Triple([d(0), d(1), d(2)]))),
                "NOT_A_TRIPLE"
            );
            st.up |= 1u128 << d(2);
            st.val[d(2) as usize] = 7;
            assert_eq!(
                reason(&refused(&st, 0, Move::Triple([d(0), d(1), d(3)]))),
                "NOT_A_TRIPLE"
            );
        }

        // ------------------------------------------------------------------ malformed / wrong seat / phase

        #[test]
        fn malformed_and_out_of_turn_input_is_refused_without_panic() {
            let st = tv03_pos();
            let slot = |o, r, c| {
                Some(pb::Slot {
                    owner: o,
                    row: r,
                    col: c,
                })
            };
            let keep = |s| pb::Action {
                kind: Some(pb::action::Kind::KeepSwap(pb::KeepSwap { slot: s })),
            };
            for bad in [
                slot(3, 1, 1),
                slot(0, 0, 1),
                slot(0, 4, 1),
                slot(0, 1, 0),
                slot(0, 1, 5),
                slot(u32::MAX, 1, 1),
                None,
            ] {
                let e = GridKnock::decide(&st, 0, &keep(bad), &mut rng()).unwrap_err();
                assert!(matches!(e, CoreError::Malformed(_)), "{e:?}");
            }
            let e = GridKnock::decide(&st, 0, &pb::Action { kind: None }, &mut rng()).unwrap_err();
            assert!(matches!(e, CoreError::Malformed(_)));
            let e = GridKnock::decide(&st, 7, &gk::to_action(Move::Draw), &mut rng()).unwrap_err();
            assert!(matches!(e, CoreError::Malformed(_)));
            assert_eq!(reason(&refused(&st, 1, Move::Draw)), "NOT_YOUR_TURN");
            assert_eq!(
                reason(&refused(&st, 0, Move::Keep(sl(0, 1, 1)))),
                "WRONG_PHASE"
            );
            assert_eq!(reason(&refused(&st, 0, Move::Knock)), "WRONG_PHASE");
            let accept = pb::Action {
                kind: Some(pb::action::Kind::AcceptKnock(pb::AcceptKnock {
                    knocker: 99,
                })),
            };
            assert!(matches!(
                GridKnock::decide(&st, 0, &accept, &mut rng()).unwrap_err(),
                CoreError::Malformed(_)
            ));
            let tri = pb::Action {
                kind: Some(pb::action::Kind::DiscardTriple(pb::DiscardTriple {
                    cells: vec![pb::Slot {
                        owner: 9,
                        row: 1,
                        col: 1,
                    }],
                })),
            };
            assert!(matches!(
                GridKnock::decide(&st, 0, &tri, &mut rng()).unwrap_err(),
                CoreError::Malformed(_)
            ));
            // Knock decision with a seat that did not knock.
            let mut k = tv07_until_accept();
            assert_eq!(reason(&refused(&k, 0, Move::Accept(1))), "NOT_A_KNOCKER");
            assert_eq!(reason(&refused(&k, 2, Move::Refuse)), "NOT_YOUR_TURN");
            play(&mut k, 0, Move::Accept(2));
            assert_eq!(
                reason(&refused(&k, 0, Move::KnockerSwap(sl(2, 1, 1)))),
                "NOT_YOUR_TURN"
            );
            assert_eq!(
                reason(&refused(&k, 2, Move::KnockerSwap(sl(0, 1, 1)))),
                "NOT_IN_DOMAIN"
            );
            assert_eq!(
                reason(&refused(&k, 2, Move::Keep(sl(2, 1, 1)))),
                "WRONG_PHASE"
            );
        }

        #[test]
        fn events_that_do_not_fit_are_corrupt_not_panics() {
            let cfg = GridKnock::checked_config(4, &Options::new()).unwrap();
            let init = GridKnock::initial(&cfg);
            let start = GridKnock::start(&init, &mut rng()).unwrap();
            // A redacted deal cannot be replayed.
            let red = GridKnock::redact(&start[0], Viewer::Seat(0)).unwrap();
            let mut s = init.clone();
            assert!(matches!(
                GridKnock::evolve(&mut s, &red),
                Err(CoreError::Corrupt(_))
            ));
            let mut s = init.clone();
            GridKnock::evolve(&mut s, &start[0]).unwrap();
            // Out of order / out of range events.
            let bogus = [
                gk::ev_to_pb(&Ev::Drawn {
                    seat: 0,
                    value: 3,
                    eligible: 0,
                }),
                gk::ev_to_pb(&Ev::TurnEnded {
                    seat: 0,
                    closed: false,
                    round_over: false,
                    next: 1,
                }),
                gk::ev_to_pb(&Ev::InitialChosen { seat: 0, slot: 95 }),
                gk::ev_to_pb(&Ev::InitialChosen { seat: 6, slot: 1 }),
                pb::Event { kind: None },
                pb::Event {
                    kind: Some(pb::event::Kind::KnockAnswered(pb::KnockAnswered {
                        seat: 200,
                        answer: 1,
                    })),
                },
                pb::Event {
                    kind: Some(pb::event::Kind::Kept(pb::Kept {
                        seat: 0,
                        slot: None,
                        placed: 99,
                        removed: 0,
                    })),
                },
            ];
            for b in &bogus {
                let mut t = s.clone();
                assert!(
                    matches!(GridKnock::evolve(&mut t, b), Err(CoreError::Corrupt(_))),
                    "{b:?}"
                );
            }
            // Garbage bytes through the registry.
            let g = tablier_core::registry::find("grid_knock").unwrap();
            let mut m = g.new_match(4, &Options::new()).unwrap();
            assert!(m.apply(&[0xff, 0xff, 0xff]).is_err());
            assert!(m.decide(0, &[0x0a, 0x05, 0xff], &mut rng()).is_err());
        }

        #[test]
        fn options_are_validated() {
            let o = |k: &str, v: &str| {
                let mut m = Options::new();
                m.insert(k.into(), v.into());
                m
            };
            assert!(GridKnock::checked_config(3, &Options::new()).is_ok());
            for bad in [
                o("colour", "red"),
                o("target_score", "0"),
                o("target_score", "x"),
                o("knocking", "maybe"),
                o("closer_penalty", "triple"),
                o("turn_cap", "5"),
            ] {
                assert!(
                    matches!(
                        GridKnock::checked_config(3, &bad),
                        Err(CoreError::InvalidOption(_))
                    ),
                    "{bad:?}"
                );
            }
            assert!(matches!(
                GridKnock::checked_config(1, &Options::new()),
                Err(CoreError::InvalidOption(_))
            ));
            assert!(matches!(
                GridKnock::checked_config(9, &Options::new()),
                Err(CoreError::InvalidOption(_))
            ));
            let c = GridKnock::checked_config(3, &o("knocking", "off")).unwrap();
            assert!(!c.knocking);
            let c = GridKnock::checked_config(3, &o("closer_penalty", "none")).unwrap();
            assert!(!c.closer_penalty);
        }

        #[test]
        fn variants_knocking_off_and_no_closer_penalty() {
            let mut st = Pos::new(3).opt("knocking", "off").build(0, &[10], &[2]);
            play(&mut st, 0, Move::Draw);
            assert_eq!((st.eligible, st.phase), (0, Phase::DecideDrawn));
            let mut p = Pos::new(2).opt("closer_penalty", "none");
            for r in 1..=3 {
                for c in 1..=4 {
                    p = p.at(sl(0, r, c), "5").at(sl(1, r, c), "1");
                }
            }
            let mut st = p.build(0, &[], &[]);
            st.closer = 0;
            let sc = gk::score_round(&st);
            assert_eq!(
                (sc.raw[0], sc.scores[0], sc.doubled),
                (sc.raw[0], sc.raw[0], false)
            );
            assert!(sc.raw[0] > sc.raw[1]);
        }

        #[test]
        fn initial_reveal_is_sealed_then_simultaneous() {
            let cfg = GridKnock::checked_config(3, &Options::new()).unwrap();
            let mut st = GridKnock::initial(&cfg);
            for e in GridKnock::start(&st.clone(), &mut rng()).unwrap() {
                GridKnock::evolve(&mut st, &e).unwrap();
            }
            assert_eq!(GridKnock::to_act(&st).to_vec(), vec![0, 1, 2]);
            let evs = GridKnock::decide(
                &st,
                1,
                &gk::to_action(Move::RevealInitial(sl(1, 1, 1))),
                &mut rng(),
            )
            .unwrap();
            assert_eq!(evs.len(), 1);
            let other = GridKnock::redact(&evs[0], Viewer::Seat(0)).unwrap();
            let own = GridKnock::redact(&evs[0], Viewer::Seat(1)).unwrap();
            assert_ne!(other, own);
            assert!(
                matches!(&other.kind, Some(pb::event::Kind::InitialChosen(c)) if c.slot.is_none())
            );
            for e in &evs {
                GridKnock::evolve(&mut st, e).unwrap();
            }
            assert_eq!(st.up, 0, "nothing flipped before everybody chose");
            for (seat, c) in [(0u8, 1u8), (0, 2), (1, 2), (2, 1), (2, 4)] {
                play(&mut st, seat, Move::RevealInitial(sl(seat, 3, c)));
            }
            assert_eq!(st.up.count_ones(), 6);
            assert_eq!(st.phase, Phase::ChooseSource);
            assert_eq!(st.active, st.first);
        }

        #[test]
        fn turn_cap_aborts_the_match() {
            let mut o = Options::new();
            o.insert("turn_cap".into(), "10".into());
            let cfg = GridKnock::checked_config(2, &o).unwrap();
            let mut st = GridKnock::initial(&cfg);
            let mut r = rng();
            let mut evs = vec![];
            gk::auto_steps(&mut st, &mut r, &mut evs).unwrap();
            let mut moves = vec![];
            while GridKnock::outcome(&st).is_none() {
                let seat = gk::to_act_mask(&st).trailing_zeros() as u8;
                gk::legal_moves(&st, seat, &mut moves);
                // Swap face-up cards only (never ends a round) when possible.
                let mv = moves
                    .iter()
                    .copied()
                    .find(|m| matches!(m, Move::Keep(s) if st.up >> s & 1 == 1))
                    .unwrap_or(moves[0]);
                let mv = if mv == Move::Draw && moves.contains(&Move::TakeDiscard) {
                    Move::TakeDiscard
                } else {
                    mv
                };
                gk::act(&mut st, seat, mv, &mut r, &mut evs).unwrap();
            }
            let o = GridKnock::outcome(&st).unwrap();
            assert!(o.aborted);
            assert!(o.winners.is_empty());
            assert_eq!(st.turns, 10);
        }

        // ------------------------------------------------------------------ hidden information

        /// Random reachable state: start a match and play `steps` random legal moves.
        fn random_state(n: u32, seed: u64, steps: usize) -> Option<State> {
            let cfg = GridKnock::checked_config(n, &Options::new()).unwrap();
            let mut st = GridKnock::initial(&cfg);
            let mut r = Rng::from_u64(seed);
            let mut evs = vec![];
            gk::auto_steps(&mut st, &mut r, &mut evs).unwrap();
            let mut moves = vec![];
            for _ in 0..steps {
                let mask = gk::to_act_mask(&st);
                if mask == 0 {
                    return None;
                }
                let seats: Vec<u8> = (0..8).filter(|i| mask >> i & 1 == 1).collect();
                let seat = seats[r.index(seats.len())];
                gk::legal_moves(&st, seat, &mut moves);
                let mv = moves[r.index(moves.len())];
                gk::act(&mut st, seat, mv, &mut r, &mut evs).unwrap();
            }
            (gk::to_act_mask(&st) != 0).then_some(st)
        }

        #[test]
        fn hidden_information_views_and_redactions_do_not_depend_on_hidden_cards() {
            let mut checked_events = 0;
            let mut checked = 0;
            let (mut hidden_changed, mut sealed_changed) = (0, 0);
            for seed in 0..300u64 {
                let n = [3u32, 4, 5, 2][seed as usize % 4];
                let Some(st) = random_state(n, seed, (seed as usize * 7) % 120) else {
                    continue;
                };
                let mut r = Rng::from_u64(seed ^ 99);
                let mask = gk::to_act_mask(&st);
                let seats: Vec<u8> = (0..8).filter(|i| mask >> i & 1 == 1).collect();
                let actor = seats[r.index(seats.len())];
                let mut moves = vec![];
                gk::legal_moves(&st, actor, &mut moves);
                let mv = moves[r.index(moves.len())];
                let orig_events = GridKnock::decide(
                    &st,
                    actor as u32,
                    &gk::to_action(mv),
                    &mut Rng::from_u64(seed),
                )
                .unwrap();
                let orig_int: Vec<Ev> = orig_events
                    .iter()
                    .map(|e| gk::pb_to_ev(e).unwrap())
                    .collect();
                let reveals_all = orig_int.iter().any(|e| matches!(e, Ev::RoundScored(_)));
                let reveals_y = orig_int
                    .iter()
                    .any(|e| matches!(e, Ev::YPlaced { .. } | Ev::YDiscarded { .. }));
                let closes_window = orig_int.iter().any(|e| matches!(e, Ev::KnockClosed { .. }));
                for s in 0..n as u8 {
                    // Places hidden from s that this action does not reveal to s.
                    let mut fixed: Vec<u8> = vec![];
                    match mv {
                        Move::Keep(p)
                        | Move::DiscardReveal(p)
                        | Move::Take(p)
                        | Move::Return(p) => fixed.push(p),
                        Move::KnockerSwap(p) if s == actor => fixed.push(p),
                        Move::RevealInitial(p) => fixed.push(p),
                        _ => {}
                    }
                    if orig_int
                        .iter()
                        .any(|e| matches!(e, Ev::InitialRevealed { .. }))
                    {
                        // The simultaneous flip shows every chosen card.
                        for i in 0..n as usize {
                            fixed.extend(
                                st.init_choice[i].iter().copied().filter(|&x| x != u8::MAX),
                            );
                        }
                    }
                    let mut hidden_slots: Vec<u8> = (0..(12 * n) as u8)
                        .filter(|&x| {
                            st.filled >> x & 1 == 1 && st.up >> x & 1 == 0 && !fixed.contains(&x)
                        })
                        .collect();
                    let draw_hidden = if matches!(mv, Move::Draw) {
                        st.draw_len.saturating_sub(1)
                    } else {
                        st.draw_len
                    } as usize;
                    // Collect the hidden values, permute them, put them back.
                    let mut vals: Vec<i8> =
                        hidden_slots.iter().map(|&x| st.val[x as usize]).collect();
                    vals.extend_from_slice(&st.draw[..draw_hidden]);
                    let y_hidden = st.y != i8::MIN && !st.y_up && s != st.knocker && !reveals_y;
                    if y_hidden {
                        vals.push(st.y);
                    }
                    r.shuffle(&mut vals);
                    let mut alt = st.clone();
                    let mut it = vals.into_iter();
                    for &x in &hidden_slots {
                        alt.val[x as usize] = it.next().unwrap();
                    }
                    for k in 0..draw_hidden {
                        alt.draw[k] = it.next().unwrap();
                    }
                    if y_hidden {
                        alt.y = it.next().unwrap();
                    }
                    // Sealed initial choices of the others move to another face-down card of their block.
                    let flips_initial = orig_int
                        .iter()
                        .any(|e| matches!(e, Ev::InitialRevealed { .. }));
                    if alt.phase == Phase::InitialReveal && !flips_initial {
                        for o in (0..n as usize).filter(|&o| o != s as usize) {
                            for k in 0..alt.init_cnt[o] as usize {
                                let cands: Vec<u8> = (o as u8 * 12..o as u8 * 12 + 12)
                                    .filter(|&x| {
                                        alt.up >> x & 1 == 0
                                            && !alt.init_choice[o].contains(&x)
                                            && mv != Move::RevealInitial(x)
                                    })
                                    .collect();
                                if !cands.is_empty() && r.index(2) == 1 {
                                    alt.init_choice[o][k] = cands[r.index(cands.len())];
                                    sealed_changed += 1;
                                }
                            }
                        }
                    }
                    if alt.val != st.val || alt.draw != st.draw || alt.y != st.y {
                        hidden_changed += 1;
                    }
                    // Sealed knock answers of the others.
                    if !closes_window {
                        if alt.answered & !(1 << s) != 0 {
                            sealed_changed += 1;
                        }
                        let others = alt.answered & !(1 << s);
                        alt.knocked ^= others;
                    }
                    hidden_slots.clear();
                    gk::invariants(&alt).unwrap();
                    let v = Viewer::Seat(s as u32);
                    assert_eq!(
                        GridKnock::view(&st, v).encode_to_vec(),
                        GridKnock::view(&alt, v).encode_to_vec(),
                        "seed {seed}: view of seat {s} depends on hidden information"
                    );
                    assert_eq!(
                        GridKnock::view(&st, Viewer::Spectator).encode_to_vec(),
                        GridKnock::view(&alt, Viewer::Spectator).encode_to_vec()
                    );
                    checked += 1;
                    // What s may know is in its view.
                    let view = GridKnock::view(&st, v);
                    for x in 0..(12 * n) as usize {
                        if st.up >> x & 1 == 1 {
                            assert_eq!(view.slots[x].value, Some(st.val[x] as i32));
                        } else {
                            assert_eq!(view.slots[x].value, None);
                        }
                    }
                    if st.knocker == s && st.y != i8::MIN {
                        assert_eq!(view.held_card, Some(st.y as i32));
                    }
                    if st.answered >> s & 1 == 1 {
                        assert_ne!(view.own_knock_answer, 0);
                    }
                    if reveals_all {
                        continue;
                    }
                    // Same public action on the copy: the redactions for s are identical.
                    let alt_events = GridKnock::decide(
                        &alt,
                        actor as u32,
                        &gk::to_action(mv),
                        &mut Rng::from_u64(seed),
                    )
                    .unwrap_or_else(|e| {
                        panic!("seed {seed}: {mv:?} legal in original but not in copy: {e}")
                    });
                    assert_eq!(
                        orig_events.len(),
                        alt_events.len(),
                        "seed {seed}: event count differs"
                    );
                    for (a, b) in orig_events.iter().zip(&alt_events) {
                        let ra = GridKnock::redact(a, v).map(|e| e.encode_to_vec());
                        let rb = GridKnock::redact(b, v).map(|e| e.encode_to_vec());
                        let sa = GridKnock::redact(a, Viewer::Spectator).map(|e| e.encode_to_vec());
                        let sb = GridKnock::redact(b, Viewer::Spectator).map(|e| e.encode_to_vec());
                        assert_eq!(sa, sb, "seed {seed}: a spectator sees a difference");
                        assert_eq!(
                            ra, rb,
                            "seed {seed}: seat {s} sees a difference in {:?} vs {:?}",
                            a, b
                        );
                        checked_events += 1;
                    }
                }
            }
            assert!(
                checked > 500 && checked_events > 500,
                "{checked} views, {checked_events} events"
            );
            assert!(
                hidden_changed > 400 && sealed_changed > 20,
                "copies differed: {hidden_changed} hidden, {sealed_changed} sealed"
            );
        }

        #[test]
        fn spectator_and_auditor_views() {
            let st = random_state(4, 5, 60).unwrap();
            let spec = GridKnock::view(&st, Viewer::Spectator);
            let aud = GridKnock::view(&st, Viewer::Auditor);
            assert!(spec.draw_pile.is_empty() && !aud.draw_pile.is_empty());
            assert!(aud
                .slots
                .iter()
                .all(|s| s.state == pb::SlotState::Empty as i32 || s.value.is_some()));
            assert!(spec
                .slots
                .iter()
                .all(|s| s.state != pb::SlotState::FaceDown as i32 || s.value.is_none()));
            let text = GridKnock::render(&st, Viewer::Seat(0));
            assert!(text.contains("Grid Knock"));
            eprintln!("{text}");
            let text = GridKnock::render(&st, Viewer::Auditor);
            eprintln!("{text}");
            assert!(text.lines().count() >= 5);
        }

        #[test]
        fn greedy_bot_beats_random_bot() {
            let cfg = GridKnock::checked_config(2, &Options::new()).unwrap();
            let mut greedy_wins = 0;
            let games = 60;
            for seed in 0..games {
                let mut st = GridKnock::initial(&cfg);
                let mut r = Rng::from_u64(seed);
                let mut evs = vec![];
                gk::auto_steps(&mut st, &mut r, &mut evs).unwrap();
                let greedy_seat = (seed % 2) as u32;
                while GridKnock::outcome(&st).is_none() {
                    let seat = GridKnock::to_act(&st).first().unwrap();
                    let bot = if seat == greedy_seat {
                        "greedy"
                    } else {
                        "random"
                    };
                    let a = GridKnock::bot_action(&st, seat, bot, &mut r).unwrap();
                    for e in GridKnock::decide(&st, seat, &a, &mut r).unwrap() {
                        GridKnock::evolve(&mut st, &e).unwrap();
                    }
                }
                if GridKnock::outcome(&st)
                    .unwrap()
                    .winners
                    .contains(&greedy_seat)
                {
                    greedy_wins += 1;
                }
            }
            assert!(
                greedy_wins * 10 >= games * 7,
                "greedy won {greedy_wins} of {games}"
            );
        }

        #[test]
        fn random_matches_end_by_the_rules_not_by_the_cap() {
            for n in [2u32, 5, 8] {
                let cfg = GridKnock::checked_config(n, &Options::new()).unwrap();
                let (mut aborted, mut rounds) = (0, 0);
                for seed in 0..100 {
                    let mut st = GridKnock::initial(&cfg);
                    let mut r = Rng::from_u64(seed);
                    let (mut evs, mut moves) = (vec![], vec![]);
                    gk::auto_steps(&mut st, &mut r, &mut evs).unwrap();
                    while GridKnock::outcome(&st).is_none() {
                        let mask = gk::to_act_mask(&st);
                        let seat = mask.trailing_zeros() as u8;
                        gk::legal_moves(&st, seat, &mut moves);
                        let mv = moves[r.index(moves.len())];
                        gk::act(&mut st, seat, mv, &mut r, &mut evs).unwrap();
                    }
                    aborted += GridKnock::outcome(&st).unwrap().aborted as u32;
                    rounds += st.round;
                }
                assert_eq!(aborted, 0, "{n} seats");
                assert!(rounds >= 100, "{n} seats: {rounds} rounds");
            }
        }

        #[test]
        fn whole_match_through_the_registry_with_bots() {
            let g = tablier_core::registry::find("grid_knock").unwrap();
            let info = g.info();
            assert_eq!(info.bots, vec!["random", "greedy"]);
            assert_eq!((info.min_players, info.max_players), (2, 8));
            let mut m = g.new_match(4, &Options::new()).unwrap();
            let seed = conformance::seed_bytes(77);
            let mut seq = 1u64;
            let mut log = vec![];
            for e in m.start(&mut Rng::for_command(&seed, seq)).unwrap() {
                m.apply(&e.payload).unwrap();
                log.push(e);
            }
            seq = log.len() as u64 + 1;
            let mut steps = 0;
            while m.outcome().is_none() {
                steps += 1;
                assert!(steps < 20_000);
                let seat = m.to_act()[0];
                let bot = if seat.is_multiple_of(2) {
                    "greedy"
                } else {
                    "random"
                };
                let a = m
                    .bot_action(seat, bot, &mut Rng::for_command(&seed, seq))
                    .unwrap();
                let evs = m
                    .decide(seat, &a, &mut Rng::for_command(&seed, seq))
                    .unwrap();
                for e in evs {
                    for v in 0..4 {
                        m.redact(&e.payload, Viewer::Seat(v))
                            .unwrap()
                            .expect("every event is at least a stub");
                    }
                    m.apply(&e.payload).unwrap();
                    log.push(e);
                    seq += 1;
                }
            }
            let o = m.outcome().unwrap();
            assert!(!o.aborted && !o.winners.is_empty() && o.lower_is_better);
            assert!(o.scores.iter().any(|&s| s >= 100));
            // Replay from the stored payloads gives the same state hash.
            let mut r = g.new_match(4, &Options::new()).unwrap();
            for e in &log {
                r.apply(&e.payload).unwrap();
            }
            assert_eq!(r.state_hash(), m.state_hash());
            assert!(m.render(Viewer::Spectator).unwrap().contains("Grid Knock"));
            assert!(
                m.bot_action(0, "greedy", &mut rng()).is_err(),
                "no bot move once over"
            );
        }
    }
}
