"""The rating model a RatingEvent records is its whole model: every parameter of openskill's
Plackett-Luce and its gamma by formula, read back to the same model (app/ranked.py)."""

from __future__ import annotations

import pytest
from openskill.models import PlackettLuce

from tablier.app.ranked import GAMMA, PARAMETERS, make_model, model_parameters


def rate(model: PlackettLuce) -> list[tuple[float, float]]:
    teams = [[model.rating(mu=27.0, sigma=6.0)], [model.rating()], [model.rating(mu=22.0, sigma=4.0)]]
    return [(t[0].mu, t[0].sigma) for t in model.rate(teams, ranks=[2, 1, 2])]


def test_the_recorded_parameters_name_gamma_and_read_back_to_the_same_ratings() -> None:
    recorded = model_parameters()
    assert set(recorded) == {*PARAMETERS, "gamma"} and recorded["gamma"] == GAMMA
    assert rate(make_model(recorded)) == rate(PlackettLuce())  # openskill's default gamma


def test_an_event_recorded_before_gamma_was_named_reads_as_the_default() -> None:
    older = {k: v for k, v in model_parameters().items() if k != "gamma"}
    assert rate(make_model(older)) == rate(make_model(model_parameters()))


def test_an_unknown_gamma_or_a_missing_parameter_is_refused() -> None:
    with pytest.raises(ValueError, match="gamma"):
        make_model(model_parameters() | {"gamma": "sigma_squared / c"})
    with pytest.raises(KeyError):
        make_model({k: v for k, v in model_parameters().items() if k != "tau"})
