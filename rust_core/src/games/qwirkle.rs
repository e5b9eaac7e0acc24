//! Placeholder so the platform compiles; replaced by the full game.
use crate::error::*; use crate::game::*; use crate::proto::qwirkle as pb; use crate::rng::Rng; use crate::proto::Outcome;
pub struct Qwirkle;
impl Game for Qwirkle {
    type Config = u32; type State = u32; type Action = pb::Action; type Event = pb::Event; type View = pb::View;
    const ID: &'static str = "qwirkle"; const NAME: &'static str = "Qwirkle"; const PROTO_PACKAGE: &'static str = "tablier.v1.qwirkle";
    const MIN_PLAYERS: u32 = 2; const MAX_PLAYERS: u32 = 4;
    fn options() -> Vec<OptionSpec> { vec![] }
    fn configure(seats: u32, _o: &Options) -> CoreResult<u32> { Ok(seats) }
    fn initial(c: &u32) -> u32 { *c }
    fn start(_s: &u32, _r: &mut Rng) -> CoreResult<Vec<pb::Event>> { Ok(vec![pb::Event{x:1}]) }
    fn decide(_s: &u32, _seat: Seat, _a: &pb::Action, _r: &mut Rng) -> CoreResult<Vec<pb::Event>> { Ok(vec![pb::Event{x:2}]) }
    fn evolve(s: &mut u32, e: &pb::Event) -> CoreResult<()> { *s += e.x; Ok(()) }
    fn to_act(s: &u32) -> Vec<Seat> { if *s > 6 { vec![] } else { vec![0] } }
    fn legal_actions(_s: &u32, _seat: Seat) -> Vec<pb::Action> { vec![pb::Action{x:0}] }
    fn view(s: &u32, _v: Viewer) -> pb::View { pb::View{x:*s} }
    fn redact(e: &pb::Event, _v: Viewer) -> Option<pb::Event> { Some(e.clone()) }
    fn event_type(_e: &pb::Event) -> &'static str { "x" }
    fn outcome(s: &u32) -> Option<Outcome> { if *s > 6 { Some(Outcome::default()) } else { None } }
    fn render(s: &u32, _v: Viewer) -> String { s.to_string() }
}
